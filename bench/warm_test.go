package bench

import (
	"context"
	"os"
	"testing"
)

// Warm writes the size asked, in its folder, and leaves nothing behind.
func TestWarm(t *testing.T) {
	dir := t.TempDir()
	w, err := Warm(context.Background(), dir, 3<<20+5)
	if err != nil {
		t.Fatal(err)
	}
	if w.Bytes != 3<<20+5 || w.Seconds <= 0 || w.MiBps <= 0 {
		t.Errorf("warm %+v", w)
	}
	if left, err := os.ReadDir(dir); err != nil || len(left) != 0 {
		t.Errorf("left in the folder: %v, %v", left, err)
	}
	if _, err := Warm(context.Background(), dir+"/missing", 1); err == nil {
		t.Error("warm into a missing folder succeeded")
	}
}
