package mcpserver

import (
	"bytes"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
)

// shrink scales an image down to at most maxWidth pixels wide (nearest neighbour: enough for
// a model to see a layout), keeping its format. A narrower image is returned as it is.
func shrink(data []byte, mime string, maxWidth int) ([]byte, string, error) {
	src, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, "", fmt.Errorf("screenshot: decode the image to scale it: %w", err)
	}
	sb := src.Bounds()
	if sb.Dx() <= maxWidth {
		return data, mime, nil
	}
	h := max(1, sb.Dy()*maxWidth/sb.Dx())
	dst := image.NewRGBA(image.Rect(0, 0, maxWidth, h))
	for y := range h {
		sy := sb.Min.Y + y*sb.Dy()/h
		for x := range maxWidth {
			dst.Set(x, y, src.At(sb.Min.X+x*sb.Dx()/maxWidth, sy))
		}
	}
	var buf bytes.Buffer
	if mime == "image/jpeg" {
		err = jpeg.Encode(&buf, dst, &jpeg.Options{Quality: 80})
	} else {
		mime, err = "image/png", png.Encode(&buf, dst)
	}
	if err != nil {
		return nil, "", fmt.Errorf("screenshot: encode the scaled image: %w", err)
	}
	return buf.Bytes(), mime, nil
}
