package change

// fixtureNames are pagetext's fixture pages, whose texts are in testdata/
// (see gen_fixtures_test.go).
var fixtureNames = []string{"news", "university", "blog", "forum", "docs", "catalog", "calendar", "broken"}
