package store

import "strings"

// MigrationVersion returns the schema version of the migration whose file name ends in suffix
// ("_outcomes_snapshot.sql"), so that tests need not hard-code numbers the integrator renumbers; 0 if none.
func MigrationVersion(suffix string) int {
	ms, err := loadMigrations()
	if err != nil {
		return 0
	}
	for _, m := range ms {
		if strings.HasSuffix(m.Name, suffix) {
			return m.Version
		}
	}
	return 0
}
