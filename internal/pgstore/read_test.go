package pgstore_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/strata-crawler/strata/internal/pgstore"
	"github.com/strata-crawler/strata/internal/pgtest"
)

// TestOpenReadOnly: a read-only open reads, refuses every write in the server (not only in strata's
// code), never migrates, and refuses a schema older or newer than this strata's, saying which.
func TestOpenReadOnly(t *testing.T) {
	ctx := t.Context()
	u := pgtest.URL(t)
	w, err := pgstore.Open(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ro, err := pgstore.OpenReadOnly(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := ro.Status(ctx, 5); err != nil || st.Seeds != 0 {
		t.Errorf("Status read-only = %+v, %v", st, err)
	}
	if err := ro.SaveModel(ctx, "m", []byte("x")); err == nil || !strings.Contains(err.Error(), "read-only transaction") {
		t.Errorf("SaveModel through a read-only open = %v; want the server's read-only refusal", err)
	}
	ro.Close()

	for _, tt := range []struct {
		name  string
		shift int
		want  error
	}{{"older", -1, pgstore.ErrOldSchema}, {"newer", +1, pgstore.ErrNewerSchema}} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := w.Pool().Exec(ctx, "UPDATE schema_version SET version = $1", pgstore.SchemaVersion()+tt.shift); err != nil {
				t.Fatal(err)
			}
			defer w.Pool().Exec(ctx, "UPDATE schema_version SET version = $1", pgstore.SchemaVersion())
			ro, err := pgstore.OpenReadOnly(ctx, u)
			if !errors.Is(err, tt.want) {
				if ro != nil {
					ro.Close()
				}
				t.Errorf("OpenReadOnly of an %s schema = %v; want %v", tt.name, err, tt.want)
			}
		})
	}
	if _, err := pgstore.OpenReadOnly(ctx, "mysql://x/y"); err == nil {
		t.Error("OpenReadOnly(mysql://…) succeeded")
	}
}
