package store

// What another backend of the same schema (package pgstore) needs to write the rows as this one
// does: the urls.recent encoding and the one time format.

// TimeFormat is how every time is stored: UTC, fixed width, so text order is time order.
const TimeFormat = timeFormat

// MaxRecentAge bounds a dated record's age (fetches.lm_age, urls.recent).
const MaxRecentAge = maxRecentAge

// DecodeRecent returns the records of a urls.recent blob, oldest first.
func DecodeRecent(blob []byte) ([]Record, error) { return decodeRecent(blob) }

// AppendRecent returns blob with r appended as its newest record, keeping the last RecentCap.
func AppendRecent(blob []byte, r Record) ([]byte, error) { return appendRecent(blob, r) }
