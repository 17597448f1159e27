//go:build ignore

// gen draws the extension's toolbar icons (a blue rounded square with a white relay mark):
// go run ./chrome-extension/icons/gen.go (from the module root) rewrites icon{16,32,48,128}.png.
package main

import (
	"image"
	"image/color"
	"image/png"
	"log"
	"math"
	"os"
	"path/filepath"
	"runtime"
)

func main() {
	_, self, _, _ := runtime.Caller(0)
	dir := filepath.Dir(self)
	for _, n := range []int{16, 32, 48, 128} {
		if err := write(filepath.Join(dir, "icon"+itoa(n)+".png"), draw(n)); err != nil {
			log.Fatal(err)
		}
	}
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

func draw(n int) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, n, n))
	blue := color.NRGBA{0x1a, 0x73, 0xe8, 0xff}
	white := color.NRGBA{0xff, 0xff, 0xff, 0xff}
	s := float64(n)
	r := s * 0.22 // corner radius
	for y := 0; y < n; y++ {
		for x := 0; x < n; x++ {
			fx, fy := float64(x)+0.5, float64(y)+0.5
			// rounded square
			dx := math.Max(0, math.Max(r-fx, fx-(s-r)))
			dy := math.Max(0, math.Max(r-fy, fy-(s-r)))
			if dx*dx+dy*dy > r*r {
				continue
			}
			c := blue
			u, v := fx/s, fy/s
			// two white bars with arrow heads: a relay in both directions
			if (v > 0.30 && v < 0.42 && u > 0.20 && u < 0.70) || (v > 0.58 && v < 0.70 && u > 0.30 && u < 0.80) {
				c = white
			}
			if u >= 0.66 && u < 0.84 && math.Abs(v-0.36) < (0.84-u)*0.9 {
				c = white
			}
			if u > 0.16 && u <= 0.34 && math.Abs(v-0.64) < (u-0.16)*0.9 {
				c = white
			}
			img.SetNRGBA(x, y, c)
		}
	}
	return img
}

func write(path string, img image.Image) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := png.Encode(f, img); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
