package crawler_test

import (
	"os"
	"testing"
)

func TestDbgLoop(t *testing.T) {
	w := newTrapWorld(t, 4, 500)
	os.Setenv("DBG_KEEP", "1")
	w.play(t, "bouras", 0, 1)
	t.Log(t.TempDir())
}
