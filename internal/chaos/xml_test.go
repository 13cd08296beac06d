package chaos

import (
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
)

// validSVG checks that the picture name in dir parses as XML.
func validSVG(name string) func(r result, dir string) (string, string) {
	return func(r result, dir string) (string, string) {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			return wrong, "no picture: " + err.Error()
		}
		defer f.Close()
		d := xml.NewDecoder(f)
		for {
			if _, err := d.Token(); err == io.EOF {
				return ok, ""
			} else if err != nil {
				return wrong, "the SVG is not XML: " + err.Error()
			}
		}
	}
}
