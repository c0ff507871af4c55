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
	"index":      {},
	"log":        {"index"},
	"msgset":     {"log", "index"},
	"net/wire":   {},
	"net/sasl":   {},
	"replica":    {"log", "index", "net/wire"},
	"coord":      {"replica", "log", "index"},
	"net/server": {"net/wire"},
	"net/quota":  {"coord"},
	"net/api":    {"coord", "replica", "log", "msgset", "index", "net/wire", "net/server", "net/sasl", "net/quota"},
	"node":       {"net/api", "net/server", "net/wire", "net/sasl", "net/quota", "coord", "replica", "log", "index"},
	"tools":      {"log", "index"},
	"bench":      {"log", "index"},
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
