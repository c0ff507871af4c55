package wire

import (
	"go/build"
	"strings"
	"testing"
)

// TestLeafImports keeps the codec a leaf: the standard library and kmsg.
func TestLeafImports(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range pkg.Imports {
		first, _, _ := strings.Cut(imp, "/")
		if strings.Contains(first, ".") && imp != "github.com/twmb/franz-go/pkg/kmsg" {
			t.Errorf("net/wire imports %s", imp)
		}
	}
}
