package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/rs/zerolog"
)

// pairedFile marks, in tabrelay's home, that an extension has connected with the secret at
// least once: the banner then stops asking to pair.
const pairedFile = "paired"

// paired reports whether an extension has ever connected to a server with this home.
func paired(home string) bool {
	_, err := os.Stat(filepath.Join(home, pairedFile))
	return err == nil
}

// markPaired records that an extension connected (once; later calls find the file).
func markPaired(home string, log *zerolog.Logger) {
	p := filepath.Join(home, pairedFile)
	if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
		return
	}
	if err := os.WriteFile(p, []byte("an extension has paired with this tabrelay home\n"), 0o600); err != nil {
		log.Warn().Err(err).Msg("could not record that the extension paired; the banner will keep offering a pairing link")
	}
}
