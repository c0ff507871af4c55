package main

import (
	"os/exec"
	"strings"
	"testing"
)

// allowed lists, per package folder, the kzero packages it may import
// (DESIGN.md "Layers": imports point down only). A package's own
// sub-packages are always allowed.
var allowed = map[string][]string{
	"index":      {"vfs"}, // its files open, grow, sync and rename through the log's FS
	"record":     {},
	"vfs":        {},
	"log":        {"record", "index", "vfs"},
	"msgset":     {"record"},
	"net/wire":   {},
	"net/sasl":   {},
	"replica":    {"log", "record", "index", "net/wire"},
	"coord":      {"coord/shards", "coord/coordrecord", "replica", "log", "record", "index", "vfs"},
	"net/server": {"net/wire"},
	"net/quota":  {"coord"},
	"net/api":    {"coord", "coord/shards", "replica", "log", "record", "msgset", "index", "net/wire", "net/server", "net/sasl", "net/quota"},
	"node":       {"net/api", "net/server", "net/wire", "net/sasl", "net/quota", "coord", "coord/shards", "replica", "log", "record", "index", "vfs"},
	"tools":      {"log", "record", "index"},
	"bench":      {"log", "record", "index"},

	// Runs the kzero binary for tests; imports nothing of kzero.
	"kzerotest": {},

	// Polls for a condition in the tests of every layer; imports nothing
	// of kzero.
	"kzerotest/await": {},

	// The coordinator runtime, under coord/group and coord/txn: it may
	// not import them (nor anything else of coord).
	"coord/shards": {"replica", "log", "record", "index"},

	// The codec of the coordinators' records (coord/group, coord/share):
	// a leaf that imports nothing of kzero.
	"coord/coordrecord": {},
}

func TestImportsPointDown(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", `{{.ImportPath}}:{{join .Imports " "}}`, "kzero/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, imports, _ := strings.Cut(line, ":")
		if !strings.HasPrefix(pkg, "kzero/") || strings.HasPrefix(pkg, "kzero/cmd/") {
			continue
		}
		layer := layerOf(strings.TrimPrefix(pkg, "kzero/"))
		if layer == "" {
			t.Errorf("package %s is in no layer of DESIGN.md", pkg)
			continue
		}
		for _, imp := range strings.Fields(imports) {
			if !strings.HasPrefix(imp, "kzero/") {
				continue
			}
			dep := layerOf(strings.TrimPrefix(imp, "kzero/"))
			if dep == layer {
				continue
			}
			ok := false
			for _, a := range allowed[layer] {
				ok = ok || a == dep
			}
			if !ok {
				t.Errorf("%s imports %s: %s may not import %s", pkg, imp, layer, dep)
			}
		}
	}
}

// layerOf maps a package path to its layer folder: the longest allowed key
// that prefixes it.
func layerOf(path string) string {
	best := ""
	for l := range allowed {
		if (path == l || strings.HasPrefix(path, l+"/")) && len(l) > len(best) {
			best = l
		}
	}
	return best
}
