package voice

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os/exec"
	"strings"
)

// SampleRate is the rate the offline engine decodes (pocketsphinx's en-us model is 16 kHz).
const SampleRate = 16000

// PCM is mono 16-bit audio at Rate samples per second.
type PCM struct {
	Rate    int
	Samples []int16
}

// Seconds is the audio's duration.
func (p PCM) Seconds() float64 {
	if p.Rate == 0 {
		return 0
	}
	return float64(len(p.Samples)) / float64(p.Rate)
}

// ErrNeedsFFmpeg is returned (wrapped) when compressed audio arrives and ffmpeg is not installed.
var ErrNeedsFFmpeg = errors.New("decoding WebM/Ogg/MP4 audio needs ffmpeg: install it (Debian: apt-get install ffmpeg) or send WAV")

// IsWAV reports whether data starts like a RIFF/WAVE file.
func IsWAV(data []byte) bool {
	return len(data) >= 12 && string(data[0:4]) == "RIFF" && string(data[8:12]) == "WAVE"
}

// ParseWAV decodes a WAV file (PCM 8/16/24/32-bit or 32/64-bit float, any channel count) into
// mono samples at the file's rate. Truncated data chunks (streamed WAV) are accepted.
func ParseWAV(data []byte) (PCM, error) {
	if !IsWAV(data) {
		return PCM{}, errors.New("not a WAV file (no RIFF/WAVE header)")
	}
	var (
		format, channels, bits uint16
		rate                   uint32
		haveFmt                bool
	)
	p := 12
	for p+8 <= len(data) {
		id := string(data[p : p+4])
		size := int(binary.LittleEndian.Uint32(data[p+4 : p+8]))
		body := data[p+8:]
		if size < 0 || size > len(body) {
			size = len(body)
		}
		body = body[:size]
		switch id {
		case "fmt ":
			if len(body) < 16 {
				return PCM{}, errors.New("WAV fmt chunk too short")
			}
			format = binary.LittleEndian.Uint16(body[0:2])
			channels = binary.LittleEndian.Uint16(body[2:4])
			rate = binary.LittleEndian.Uint32(body[4:8])
			bits = binary.LittleEndian.Uint16(body[14:16])
			if format == 0xFFFE && len(body) >= 26 { // WAVE_FORMAT_EXTENSIBLE: sub-format GUID
				format = binary.LittleEndian.Uint16(body[24:26])
			}
			haveFmt = true
		case "data":
			if !haveFmt {
				return PCM{}, errors.New("WAV data chunk before its fmt chunk")
			}
			return decodeSamples(body, format, int(channels), int(bits), int(rate))
		}
		p += 8 + size + size%2
	}
	return PCM{}, errors.New("WAV file has no data chunk")
}

func decodeSamples(body []byte, format uint16, channels, bits, rate int) (PCM, error) {
	if channels < 1 || rate < 1000 || rate > 384000 {
		return PCM{}, fmt.Errorf("unsupported WAV: %d channels at %d Hz", channels, rate)
	}
	bps := bits / 8
	var sample func(b []byte) float64
	switch {
	case format == 1 && bits == 8:
		sample = func(b []byte) float64 { return (float64(b[0]) - 128) / 128 }
	case format == 1 && bits == 16:
		sample = func(b []byte) float64 { return float64(int16(binary.LittleEndian.Uint16(b))) / 32768 }
	case format == 1 && bits == 24:
		sample = func(b []byte) float64 {
			v := int32(uint32(b[0])<<8|uint32(b[1])<<16|uint32(b[2])<<24) >> 8
			return float64(v) / 8388608
		}
	case format == 1 && bits == 32:
		sample = func(b []byte) float64 { return float64(int32(binary.LittleEndian.Uint32(b))) / 2147483648 }
	case format == 3 && bits == 32:
		sample = func(b []byte) float64 { return float64(math.Float32frombits(binary.LittleEndian.Uint32(b))) }
	case format == 3 && bits == 64:
		sample = func(b []byte) float64 { return math.Float64frombits(binary.LittleEndian.Uint64(b)) }
	default:
		return PCM{}, fmt.Errorf("unsupported WAV encoding (format %d, %d bits): send 16-bit PCM", format, bits)
	}
	frame := bps * channels
	n := len(body) / frame
	out := make([]int16, n)
	for i := 0; i < n; i++ {
		var sum float64
		for c := 0; c < channels; c++ {
			off := i*frame + c*bps
			sum += sample(body[off : off+bps])
		}
		out[i] = clip16(sum / float64(channels))
	}
	return PCM{Rate: rate, Samples: out}, nil
}

func clip16(v float64) int16 {
	v *= 32767
	switch {
	case v > 32767:
		return 32767
	case v < -32768:
		return -32768
	}
	return int16(math.Round(v))
}

// Resample converts p to rate by linear interpolation (after a simple box low-pass when
// downsampling), which is plenty for speech recognition.
func Resample(p PCM, rate int) PCM {
	if p.Rate == rate || len(p.Samples) == 0 {
		return PCM{Rate: rate, Samples: p.Samples}
	}
	src := p.Samples
	ratio := float64(p.Rate) / float64(rate)
	if ratio > 1.5 { // average over the source span of each output sample
		w := int(math.Round(ratio))
		f := make([]int16, len(src))
		var acc int64
		for i := range src {
			acc += int64(src[i])
			if i >= w {
				acc -= int64(src[i-w])
			}
			d := int64(min(i+1, w))
			f[i] = int16(acc / d)
		}
		src = f
	}
	n := int(float64(len(p.Samples)) / ratio)
	out := make([]int16, n)
	for i := range out {
		x := float64(i) * ratio
		j := int(x)
		fr := x - float64(j)
		a := float64(src[min(j, len(src)-1)])
		b := float64(src[min(j+1, len(src)-1)])
		out[i] = int16(math.Round(a + (b-a)*fr))
	}
	return PCM{Rate: rate, Samples: out}
}

// EncodeWAV writes p as a 16-bit mono PCM WAV file.
func EncodeWAV(p PCM) []byte {
	var b bytes.Buffer
	dataLen := len(p.Samples) * 2
	b.WriteString("RIFF")
	_ = binary.Write(&b, binary.LittleEndian, uint32(36+dataLen))
	b.WriteString("WAVEfmt ")
	_ = binary.Write(&b, binary.LittleEndian, uint32(16))
	_ = binary.Write(&b, binary.LittleEndian, uint16(1))
	_ = binary.Write(&b, binary.LittleEndian, uint16(1))
	_ = binary.Write(&b, binary.LittleEndian, uint32(p.Rate))
	_ = binary.Write(&b, binary.LittleEndian, uint32(p.Rate*2))
	_ = binary.Write(&b, binary.LittleEndian, uint16(2))
	_ = binary.Write(&b, binary.LittleEndian, uint16(16))
	b.WriteString("data")
	_ = binary.Write(&b, binary.LittleEndian, uint32(dataLen))
	_ = binary.Write(&b, binary.LittleEndian, p.Samples)
	return b.Bytes()
}

// TrimSilence drops leading and trailing stretches quieter than about -40 dBFS (keeping a little
// margin), so that a push-to-talk clip decodes fast and its speech end can be measured.
func TrimSilence(p PCM) PCM {
	const thr = 330 // ≈ -40 dBFS
	win := max(p.Rate/100, 1)
	loud := func(i int) bool {
		var peak int
		for _, s := range p.Samples[i:min(i+win, len(p.Samples))] {
			if a := int(s); a > peak || -a > peak {
				peak = max(a, -a)
			}
		}
		return peak > thr
	}
	start, end := 0, len(p.Samples)
	for start < end && !loud(start) {
		start += win
	}
	for end > start && !loud(max(end-win, 0)) {
		end -= win
	}
	if start >= end {
		return PCM{Rate: p.Rate}
	}
	margin := p.Rate / 5
	start, end = max(start-margin, 0), min(end+margin, len(p.Samples))
	return PCM{Rate: p.Rate, Samples: p.Samples[start:end]}
}

// Decode turns uploaded audio into 16 kHz mono PCM: WAV in Go, anything else (WebM/Opus, Ogg,
// MP4) through ffmpeg when it is installed.
func Decode(ctx context.Context, data []byte, mime string) (PCM, error) {
	if IsWAV(data) {
		p, err := ParseWAV(data)
		if err != nil {
			return PCM{}, err
		}
		return Resample(p, SampleRate), nil
	}
	ff, err := exec.LookPath("ffmpeg")
	if err != nil {
		return PCM{}, fmt.Errorf("%s audio: %w", describeMIME(mime), ErrNeedsFFmpeg)
	}
	cmd := exec.CommandContext(ctx, ff, "-hide_banner", "-nostdin", "-loglevel", "error",
		"-i", "pipe:0", "-ac", "1", "-ar", fmt.Sprint(SampleRate), "-f", "s16le", "pipe:1")
	cmd.Stdin = bytes.NewReader(data)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return PCM{}, fmt.Errorf("ffmpeg could not decode the %s audio (%v): %s", describeMIME(mime), err, strings.TrimSpace(lastLine(stderr.String())))
	}
	raw := out.Bytes()
	s := make([]int16, len(raw)/2)
	for i := range s {
		s[i] = int16(binary.LittleEndian.Uint16(raw[2*i:]))
	}
	return PCM{Rate: SampleRate, Samples: s}, nil
}

func describeMIME(mime string) string {
	if mime == "" {
		return "uploaded"
	}
	return mime
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// extFor is the file name extension for a MIME type (cloud endpoints look at the name).
func extFor(mime string, data []byte) string {
	if IsWAV(data) {
		return "wav"
	}
	m := strings.ToLower(mime)
	switch {
	case strings.Contains(m, "webm"):
		return "webm"
	case strings.Contains(m, "ogg"):
		return "ogg"
	case strings.Contains(m, "mp4"), strings.Contains(m, "m4a"), strings.Contains(m, "aac"):
		return "m4a"
	case strings.Contains(m, "mpeg"), strings.Contains(m, "mp3"):
		return "mp3"
	case strings.Contains(m, "wav"):
		return "wav"
	}
	if len(data) >= 4 && bytes.Equal(data[:4], []byte{0x1a, 0x45, 0xdf, 0xa3}) {
		return "webm"
	}
	if len(data) >= 4 && string(data[:4]) == "OggS" {
		return "ogg"
	}
	return "webm"
}
