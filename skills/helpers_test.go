package skills

import (
	"testing"

	"github.com/rs/zerolog"
)

func testLog(t *testing.T) zerolog.Logger {
	return zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.DebugLevel)
}
