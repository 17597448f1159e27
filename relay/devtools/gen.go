//go:build ignore

// gen.go writes protocol.json.gz, the protocol description /json/protocol serves, from the
// devtools-protocol npm package (Chromium's own protocol files, BSD-3-Clause, see LICENSE):
// browser_protocol.json's domains then js_protocol.json's, under browser_protocol.json's
// version, indented as Chrome serves it. Run through `go generate ./relay/`.
package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
)

type protocol struct {
	Version json.RawMessage   `json:"version"`
	Domains []json.RawMessage `json:"domains"`
}

func read(path string) protocol {
	data, err := os.ReadFile(path)
	if err != nil {
		log.Fatalf("read the protocol file (run `npm ci` in e2e/clients first): %v", err)
	}
	var p protocol
	if err := json.Unmarshal(data, &p); err != nil || len(p.Domains) == 0 {
		log.Fatalf("%s: not a protocol description (%v)", path, err)
	}
	return p
}

func main() {
	from := flag.String("from", "../e2e/clients/node_modules/devtools-protocol", "the devtools-protocol package directory")
	flag.Parse()
	b := read(filepath.Join(*from, "json", "browser_protocol.json"))
	js := read(filepath.Join(*from, "json", "js_protocol.json"))
	merged, err := json.MarshalIndent(protocol{Version: b.Version, Domains: append(b.Domains, js.Domains...)}, "", "    ")
	if err != nil {
		log.Fatal(err)
	}
	var pkg struct {
		Version string `json:"version"`
	}
	if data, err := os.ReadFile(filepath.Join(*from, "package.json")); err == nil {
		_ = json.Unmarshal(data, &pkg)
	}
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	zw.Write(merged)
	if err := zw.Close(); err != nil {
		log.Fatal(err)
	}
	for name, data := range map[string][]byte{
		"devtools/protocol.json.gz": gz.Bytes(),
		"devtools/VERSION":          []byte("devtools-protocol " + pkg.Version + "\n"),
	} {
		if err := os.WriteFile(name, data, 0o644); err != nil {
			log.Fatal(err)
		}
	}
	lic, err := os.ReadFile(filepath.Join(*from, "LICENSE"))
	if err != nil {
		log.Fatalf("the package's licence: %v", err)
	}
	if err := os.WriteFile("devtools/LICENSE", lic, 0o644); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("devtools-protocol %s: %d domains, %d bytes, %d gzipped\n", pkg.Version, len(b.Domains)+len(js.Domains), len(merged), gz.Len())
}
