package robots

import (
	"slices"
	"strings"
	"testing"
)

// verdict is one expected answer of Allowed.
type verdict struct {
	agent   string
	path    string
	allowed bool
}

// conformanceCase is one robots.txt with the answers a conforming parser gives for it.
type conformanceCase struct {
	name   string
	robots string
	checks []verdict
}

// rfc9309Example51 is the "simple example" of RFC 9309 §5.1, with its closing "EOF" marker kept
// as a junk line that must be skipped.
const rfc9309Example51 = `User-Agent: *
Disallow: *.gif$
Disallow: /example/
Allow: /publications/

User-Agent: foobot
Disallow:/
Allow:/example/page.html
Allow:/example/allowed.gif

User-Agent: barbot
User-Agent: bazbot
Disallow: /example/page.html

User-Agent: quxbot

EOF
`

// rfcCases come from RFC 9309 itself; every one of them must pass.
var rfcCases = []conformanceCase{
	{
		name:   "5.1 simple example",
		robots: rfc9309Example51,
		checks: []verdict{
			// An agent without a group of its own obeys "*".
			{"otherbot", "/", true},
			{"otherbot", "/example/page.html", false},
			{"otherbot", "/example/", false},
			{"otherbot", "/picture.gif", false},
			{"otherbot", "/dir/picture.gif", false},
			{"otherbot", "/picture.gif?size=2", true}, // '$': the path must end in .gif
			{"otherbot", "/picture.gifs", true},
			{"otherbot", "/publications/", true},
			{"otherbot", "/publications/cover.gif", true}, // "/publications/" is longer than "*.gif$"
			{"otherbot", "/other/page.html", true},
			// foobot has its own group and does not inherit "*".
			{"foobot", "/", false},
			{"foobot", "/example/page.html", true},
			{"foobot", "/example/allowed.gif", true},
			{"foobot", "/example/other.html", false},
			{"foobot", "/publications/", false},
			{"FooBot", "/example/page.html", true}, // product tokens match case-insensitively
			{"FOOBOT", "/", false},
			// barbot and bazbot share one group.
			{"barbot", "/example/page.html", false},
			{"barbot", "/example/other.html", true},
			{"barbot", "/picture.gif", true},
			{"bazbot", "/example/page.html", false},
			{"bazbot", "/publications/", true},
			// quxbot's group is empty: everything is allowed, "*" does not apply.
			{"quxbot", "/example/page.html", true},
			{"quxbot", "/picture.gif", true},
			// The implicit allow of robots.txt itself.
			{"foobot", "/robots.txt", true},
		},
	},
	{
		name: "5.2 longest match",
		robots: "User-Agent: foobot\n" +
			"Allow: /example/page/\n" +
			"Disallow: /example/page/disallowed.gif\n",
		checks: []verdict{
			{"foobot", "/example/page/", true},
			{"foobot", "/example/page/allowed.gif", true},
			{"foobot", "/example/page/disallowed.gif", false},
			{"foobot", "/example/page/disallowed.gif?x=1", false},
		},
	},
	{
		name: "2.2.2 equivalent allow and disallow: allow wins",
		robots: "User-Agent: *\n" +
			"Disallow: /example/\n" +
			"Allow: /example/\n",
		checks: []verdict{
			{"foobot", "/example/x", true},
		},
	},
	{
		name: "2.2.2 robots.txt is implicitly allowed",
		robots: "User-Agent: *\n" +
			"Disallow: /\n" +
			"Disallow: /robots.txt\n",
		checks: []verdict{
			{"foobot", "/robots.txt", true},
			{"foobot", "/robots.txt.bak", false},
			{"foobot", "/", false},
		},
	},
	{
		name: "2.2.2 empty disallow allows",
		robots: "User-Agent: *\n" +
			"Disallow:\n",
		checks: []verdict{
			{"foobot", "/", true},
			{"foobot", "/anything", true},
		},
	},
	{
		name: "2.2.1 no matching group and no star group: no rules apply",
		robots: "User-Agent: foobot\n" +
			"Disallow: /\n",
		checks: []verdict{
			{"barbot", "/x", true},
			{"foobot", "/x", false},
		},
	},
	{
		name: "2.2.1 groups for the same agent are combined",
		robots: "User-Agent: foobot\n" +
			"Disallow: /a\n" +
			"\n" +
			"User-Agent: *\n" +
			"Disallow: /\n" +
			"\n" +
			"User-Agent: FooBot\n" +
			"Disallow: /b\n" +
			"Allow: /a/public\n",
		checks: []verdict{
			{"foobot", "/a", false},
			{"foobot", "/b", false},
			{"foobot", "/a/public", true},
			{"foobot", "/c", true},
			{"otherbot", "/c", false},
		},
	},
	{
		name: "2.2.3 special characters",
		robots: "User-Agent: *\n" +
			"# comment on its own line\n" +
			"Disallow: /this/path/exactly$ # comment in line\n" +
			"Disallow: /this/*/wild\n",
		checks: []verdict{
			{"foobot", "/this/path/exactly", false},
			{"foobot", "/this/path/exactly/", true},
			{"foobot", "/this/path/exactly?x", true},
			{"foobot", "/this/a/b/wild", false},
			{"foobot", "/this/a/wilder", false},
			{"foobot", "/this/wild", true},
			{"foobot", "/that/a/wild", true},
		},
	},
	{
		name: "2.2.3 percent-encoded special characters match literally",
		robots: "User-Agent: *\n" +
			"Disallow: /path/file-with-a-%2A.html\n" +
			"Disallow: /path/foo-%24\n",
		checks: []verdict{
			{"foobot", "/path/file-with-a-*.html", false},
			{"foobot", "/path/file-with-a-%2a.html", false},
			{"foobot", "/path/file-with-a-x.html", true},
			{"foobot", "/path/foo-$", false},
			{"foobot", "/path/foo-", true},
			{"foobot", "/path/foo-x", true},
		},
	},
	{
		name: "2.2.2 percent-encoding table",
		robots: "User-Agent: *\n" +
			"Disallow: /\n" +
			"Allow: /foo/bar?baz=quz\n" +
			"Allow: /foo/bar?baz=https://foo.bar\n" +
			"Allow: /foo/bar/\u30c4\n" +
			"Allow: /foo/bar/%62%61%7A\n",
		checks: []verdict{
			{"foobot", "/foo/bar?baz=quz", true},
			{"foobot", "/foo/bar?baz=https://foo.bar", true},
			{"foobot", "/foo/bar?baz=https%3A%2F%2Ffoo.bar", true},
			{"foobot", "/foo/bar/%E3%83%84", true},
			{"foobot", "/foo/bar/\u30c4", true},
			{"foobot", "/foo/bar/baz", true},
			{"foobot", "/foo/bar/%62%61%7A", true},
			{"foobot", "/foo/bar/qux", false},
		},
	},
}

// googleCases are ported from google/robotstxt robots_test.cc (the reference suite by the
// authors of RFC 9309). URLs become path plus query. Where Google's answer departs from
// RFC 9309 the RFC is followed, and the case says so.
var googleCases = []conformanceCase{
	{
		name:   "GoogleOnly_SystemTest empty file",
		robots: "",
		checks: []verdict{{"FooBot", "", true}, {"", "", true}},
	},
	{
		name:   "GoogleOnly_SystemTest",
		robots: "user-agent: FooBot\ndisallow: /\n",
		checks: []verdict{
			{"", "", true},        // an empty agent names no group, and there is no "*" group
			{"FooBot", "", false}, // the empty path is "/"
		},
	},
	{
		name:   "ID_LineSyntax_Line correct",
		robots: "user-agent: FooBot\ndisallow: /\n",
		checks: []verdict{{"FooBot", "/x/y", false}},
	},
	{
		name:   "ID_LineSyntax_Line incorrect",
		robots: "foo: FooBot\nbar: /\n",
		checks: []verdict{{"FooBot", "/x/y", true}},
	},
	{
		name:   "ID_LineSyntax_Line missing colon accepted",
		robots: "user-agent FooBot\ndisallow /\n",
		checks: []verdict{{"FooBot", "/x/y", false}},
	},
	{
		name: "ID_LineSyntax_Groups",
		robots: "allow: /foo/bar/\n" +
			"\n" +
			"user-agent: FooBot\n" +
			"disallow: /\n" +
			"allow: /x/\n" +
			"user-agent: BarBot\n" +
			"disallow: /\n" +
			"allow: /y/\n" +
			"\n" +
			"\n" +
			"allow: /w/\n" +
			"user-agent: BazBot\n" +
			"\n" +
			"user-agent: FooBot\n" +
			"allow: /z/\n" +
			"disallow: /\n",
		checks: []verdict{
			{"FooBot", "/x/b", true},
			{"FooBot", "/z/d", true},
			{"FooBot", "/y/c", false},
			{"BarBot", "/y/c", true},
			{"BarBot", "/w/a", true},
			{"BarBot", "/z/d", false},
			{"BazBot", "/z/d", true},
			// The rule before the first group applies to no one.
			{"FooBot", "/foo/bar/", false},
			{"BarBot", "/foo/bar/", false},
			{"BazBot", "/foo/bar/", false},
		},
	},
	{
		name: "ID_LineSyntax_Groups_OtherRules sitemap",
		robots: "User-agent: BarBot\n" +
			"Sitemap: https://foo.bar/sitemap\n" +
			"User-agent: *\n" +
			"Disallow: /\n",
		checks: []verdict{{"FooBot", "/", false}, {"BarBot", "/", false}},
	},
	{
		name: "ID_LineSyntax_Groups_OtherRules unknown line",
		robots: "User-agent: FooBot\n" +
			"Invalid-Unknown-Line: unknown\n" +
			"User-agent: *\n" +
			"Disallow: /\n",
		checks: []verdict{{"FooBot", "/", false}, {"BarBot", "/", false}},
	},
	{
		name:   "ID_REPLineNamesCaseInsensitive upper",
		robots: "USER-AGENT: FooBot\nALLOW: /x/\nDISALLOW: /\n",
		checks: []verdict{{"FooBot", "/x/y", true}, {"FooBot", "/a/b", false}},
	},
	{
		name:   "ID_REPLineNamesCaseInsensitive lower",
		robots: "user-agent: FooBot\nallow: /x/\ndisallow: /\n",
		checks: []verdict{{"FooBot", "/x/y", true}, {"FooBot", "/a/b", false}},
	},
	{
		name:   "ID_REPLineNamesCaseInsensitive camel",
		robots: "uSeR-aGeNt: FooBot\nAlLoW: /x/\ndIsAlLoW: /\n",
		checks: []verdict{{"FooBot", "/x/y", true}, {"FooBot", "/a/b", false}},
	},
	{
		name:   "ID_UserAgentValueCaseInsensitive upper",
		robots: "User-Agent: FOO BAR\nAllow: /x/\nDisallow: /\n",
		checks: []verdict{{"Foo", "/x/y", true}, {"Foo", "/a/b", false}, {"foo", "/x/y", true}, {"foo", "/a/b", false}},
	},
	{
		name:   "ID_UserAgentValueCaseInsensitive lower",
		robots: "User-Agent: foo bar\nAllow: /x/\nDisallow: /\n",
		checks: []verdict{{"Foo", "/x/y", true}, {"Foo", "/a/b", false}, {"foo", "/x/y", true}, {"foo", "/a/b", false}},
	},
	{
		name:   "ID_UserAgentValueCaseInsensitive camel",
		robots: "User-Agent: FoO bAr\nAllow: /x/\nDisallow: /\n",
		checks: []verdict{{"Foo", "/x/y", true}, {"Foo", "/a/b", false}, {"foo", "/x/y", true}, {"foo", "/a/b", false}},
	},
	{
		name: "GoogleOnly_AcceptUserAgentUpToFirstSpace",
		robots: "User-Agent: *\n" +
			"Disallow: /\n" +
			"User-Agent: Foo Bar\n" +
			"Allow: /x/\n" +
			"Disallow: /\n",
		checks: []verdict{
			{"Foo", "/x/y", true},
			{"Foo Bar", "/x/y", false}, // not a product token, so it names no group and "*" applies
		},
	},
	{
		name:   "ID_GlobalGroups_Secondary empty",
		robots: "",
		checks: []verdict{{"FooBot", "/x/y", true}},
	},
	{
		name:   "ID_GlobalGroups_Secondary global",
		robots: "user-agent: *\nallow: /\nuser-agent: FooBot\ndisallow: /\n",
		checks: []verdict{{"FooBot", "/x/y", false}, {"BarBot", "/x/y", true}},
	},
	{
		name: "ID_GlobalGroups_Secondary only specific",
		robots: "user-agent: FooBot\nallow: /\n" +
			"user-agent: BarBot\ndisallow: /\n" +
			"user-agent: BazBot\ndisallow: /\n",
		checks: []verdict{{"QuxBot", "/x/y", true}},
	},
	{
		name:   "ID_AllowDisallow_Value_CaseSensitive lower",
		robots: "user-agent: FooBot\ndisallow: /x/\n",
		checks: []verdict{{"FooBot", "/x/y", false}},
	},
	{
		name:   "ID_AllowDisallow_Value_CaseSensitive upper",
		robots: "user-agent: FooBot\ndisallow: /X/\n",
		checks: []verdict{{"FooBot", "/x/y", true}},
	},
	{
		name:   "ID_LongestMatch longer disallow",
		robots: "user-agent: FooBot\ndisallow: /x/page.html\nallow: /x/\n",
		checks: []verdict{{"FooBot", "/x/page.html", false}},
	},
	{
		name:   "ID_LongestMatch longer allow",
		robots: "user-agent: FooBot\nallow: /x/page.html\ndisallow: /x/\n",
		checks: []verdict{{"FooBot", "/x/page.html", true}, {"FooBot", "/x/", false}},
	},
	{
		name:   "ID_LongestMatch empty patterns",
		robots: "user-agent: FooBot\ndisallow: \nallow: \n",
		checks: []verdict{{"FooBot", "/x/page.html", true}},
	},
	{
		name:   "ID_LongestMatch equal root patterns",
		robots: "user-agent: FooBot\ndisallow: /\nallow: /\n",
		checks: []verdict{{"FooBot", "/x/page.html", true}},
	},
	{
		name:   "ID_LongestMatch directory",
		robots: "user-agent: FooBot\ndisallow: /x\nallow: /x/\n",
		checks: []verdict{{"FooBot", "/x", false}, {"FooBot", "/x/", true}},
	},
	{
		name:   "ID_LongestMatch equal patterns",
		robots: "user-agent: FooBot\ndisallow: /x/page.html\nallow: /x/page.html\n",
		checks: []verdict{{"FooBot", "/x/page.html", true}},
	},
	{
		name:   "ID_LongestMatch wildcard longer",
		robots: "user-agent: FooBot\nallow: /page\ndisallow: /*.html\n",
		checks: []verdict{{"FooBot", "/page.html", false}, {"FooBot", "/page", true}},
	},
	{
		name:   "ID_LongestMatch wildcard shorter",
		robots: "user-agent: FooBot\nallow: /x/page.\ndisallow: /*.html\n",
		checks: []verdict{{"FooBot", "/x/page.html", true}, {"FooBot", "/x/y.html", false}},
	},
	{
		name:   "ID_LongestMatch specific group only",
		robots: "User-agent: *\nDisallow: /x/\nUser-agent: FooBot\nDisallow: /y/\n",
		checks: []verdict{{"FooBot", "/x/page", true}, {"FooBot", "/y/page", false}},
	},
	{
		name:   "ID_Encoding query stays unencoded",
		robots: "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar?qux=taz&baz=http://foo.bar?tar&par\n",
		checks: []verdict{{"FooBot", "/foo/bar?qux=taz&baz=http://foo.bar?tar&par", true}},
	},
	{
		name:   "ID_Encoding 3 byte character",
		robots: "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/\u30c4\n",
		checks: []verdict{
			{"FooBot", "/foo/bar/%E3%83%84", true},
			// Google: false, because it leaves encoding the URL to the caller. RFC 9309 §2.2.2
			// says octets outside ASCII MUST be percent-encoded before comparison, in the URI as
			// in the rule, so the raw character matches.
			{"FooBot", "/foo/bar/\u30c4", true},
		},
	},
	{
		name:   "ID_Encoding percent-encoded 3 byte character",
		robots: "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/%E3%83%84\n",
		checks: []verdict{
			{"FooBot", "/foo/bar/%E3%83%84", true},
			{"FooBot", "/foo/bar/\u30c4", true}, // Google: false; RFC 9309 §2.2.2, as above
		},
	},
	{
		name:   "ID_Encoding percent-encoded unreserved",
		robots: "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/%62%61%7A\n",
		checks: []verdict{
			// Google: false. The last row of the RFC 9309 §2.2.2 table matches
			// "/foo/bar/%62%61%7A" as "/foo/bar/baz": escapes of unreserved characters are decoded.
			{"FooBot", "/foo/bar/baz", true},
			{"FooBot", "/foo/bar/%62%61%7A", true},
		},
	},
	{
		name:   "ID_SpecialCharacters wildcard",
		robots: "User-agent: FooBot\nDisallow: /foo/bar/quz\nAllow: /foo/*/qux\n",
		checks: []verdict{
			{"FooBot", "/foo/bar/quz", false},
			{"FooBot", "/foo/quz", true},
			{"FooBot", "/foo//quz", true},
			{"FooBot", "/foo/bax/quz", true},
		},
	},
	{
		name:   "ID_SpecialCharacters end anchor",
		robots: "User-agent: FooBot\nDisallow: /foo/bar$\nAllow: /foo/bar/qux\n",
		checks: []verdict{
			{"FooBot", "/foo/bar", false},
			{"FooBot", "/foo/bar/qux", true},
			{"FooBot", "/foo/bar/", true},
			{"FooBot", "/foo/bar/baz", true},
		},
	},
	{
		name:   "ID_SpecialCharacters comments",
		robots: "User-agent: FooBot\n# Disallow: /\nDisallow: /foo/quz#qux\nAllow: /\n",
		checks: []verdict{{"FooBot", "/foo/bar", true}, {"FooBot", "/foo/quz", false}},
	},
	{
		name:   "GoogleOnly_IndexHTMLisDirectory",
		robots: "User-Agent: *\nAllow: /allowed-slash/index.html\nDisallow: /\n",
		checks: []verdict{
			// Google: true, by its own extension that "index.html" also allows its directory.
			// RFC 9309 has no such rule, and disallowing is the polite reading.
			{"foobot", "/allowed-slash/", false},
			{"foobot", "/allowed-slash/index.htm", false},
			{"foobot", "/allowed-slash/index.html", true},
			{"foobot", "/anyother-url", false},
		},
	},
	{
		name:   "GoogleOnly_DocumentationChecks fish",
		robots: "user-agent: FooBot\ndisallow: /\nallow: /fish\n",
		checks: []verdict{
			{"FooBot", "/bar", false},
			{"FooBot", "/fish", true},
			{"FooBot", "/fish.html", true},
			{"FooBot", "/fish/salmon.html", true},
			{"FooBot", "/fishheads", true},
			{"FooBot", "/fishheads/yummy.html", true},
			{"FooBot", "/fish.html?id=anything", true},
			{"FooBot", "/Fish.asp", false},
			{"FooBot", "/catfish", false},
			{"FooBot", "/?id=fish", false},
		},
	},
	{
		name:   "GoogleOnly_DocumentationChecks fish star",
		robots: "user-agent: FooBot\ndisallow: /\nallow: /fish*\n",
		checks: []verdict{
			{"FooBot", "/bar", false},
			{"FooBot", "/fish", true},
			{"FooBot", "/fish.html", true},
			{"FooBot", "/fish/salmon.html", true},
			{"FooBot", "/fishheads", true},
			{"FooBot", "/fishheads/yummy.html", true},
			{"FooBot", "/fish.html?id=anything", true},
			{"FooBot", "/Fish.bar", false},
			{"FooBot", "/catfish", false},
			{"FooBot", "/?id=fish", false},
		},
	},
	{
		name:   "GoogleOnly_DocumentationChecks fish slash",
		robots: "user-agent: FooBot\ndisallow: /\nallow: /fish/\n",
		checks: []verdict{
			{"FooBot", "/bar", false},
			{"FooBot", "/fish/", true},
			{"FooBot", "/fish/salmon", true},
			{"FooBot", "/fish/?salmon", true},
			{"FooBot", "/fish/salmon.html", true},
			{"FooBot", "/fish/?id=anything", true},
			{"FooBot", "/fish", false},
			{"FooBot", "/fish.html", false},
			{"FooBot", "/Fish/Salmon.html", false},
		},
	},
	{
		name:   "GoogleOnly_DocumentationChecks php",
		robots: "user-agent: FooBot\ndisallow: /\nallow: /*.php\n",
		checks: []verdict{
			{"FooBot", "/bar", false},
			{"FooBot", "/filename.php", true},
			{"FooBot", "/folder/filename.php", true},
			{"FooBot", "/folder/filename.php?parameters", true},
			{"FooBot", "//folder/any.php.file.html", true},
			{"FooBot", "/filename.php/", true},
			{"FooBot", "/index?f=filename.php/", true},
			{"FooBot", "/php/", false},
			{"FooBot", "/index?php", false},
			{"FooBot", "/windows.PHP", false},
		},
	},
	{
		name:   "GoogleOnly_DocumentationChecks php end",
		robots: "user-agent: FooBot\ndisallow: /\nallow: /*.php$\n",
		checks: []verdict{
			{"FooBot", "/bar", false},
			{"FooBot", "/filename.php", true},
			{"FooBot", "/folder/filename.php", true},
			{"FooBot", "/filename.php?parameters", false},
			{"FooBot", "/filename.php/", false},
			{"FooBot", "/filename.php5", false},
			{"FooBot", "/php/", false},
			{"FooBot", "/filename?php", false},
			{"FooBot", "/aaaphpaaa", false},
			{"FooBot", "//windows.PHP", false},
		},
	},
	{
		name:   "GoogleOnly_DocumentationChecks fish star php",
		robots: "user-agent: FooBot\ndisallow: /\nallow: /fish*.php\n",
		checks: []verdict{
			{"FooBot", "/bar", false},
			{"FooBot", "/fish.php", true},
			{"FooBot", "/fishheads/catfish.php?parameters", true},
			{"FooBot", "/Fish.PHP", false},
		},
	},
	{
		name:   "GoogleOnly_DocumentationChecks precedence p",
		robots: "user-agent: FooBot\nallow: /p\ndisallow: /\n",
		checks: []verdict{{"FooBot", "/page", true}},
	},
	{
		name:   "GoogleOnly_DocumentationChecks precedence folder",
		robots: "user-agent: FooBot\nallow: /folder\ndisallow: /folder\n",
		checks: []verdict{{"FooBot", "/folder/page", true}},
	},
	{
		name:   "GoogleOnly_DocumentationChecks precedence htm",
		robots: "user-agent: FooBot\nallow: /page\ndisallow: /*.htm\n",
		checks: []verdict{{"FooBot", "/page.htm", false}},
	},
	{
		name:   "GoogleOnly_DocumentationChecks precedence root end",
		robots: "user-agent: FooBot\nallow: /$\ndisallow: /\n",
		checks: []verdict{{"FooBot", "/", true}, {"FooBot", "/page.html", false}},
	},
	{
		// Google cuts lines after 16664 bytes; RFC 9309 has no line limit, and MaxSize already
		// bounds the cost, so a long rule is kept whole.
		name:   "GoogleOnly_LineTooLong kept whole",
		robots: "user-agent: FooBot\ndisallow: /x/" + strings.Repeat("a", 20000) + "/qux\n",
		checks: []verdict{
			{"FooBot", "/fux", true},
			{"FooBot", "/x/" + strings.Repeat("a", 20000) + "/fux", true},
			{"FooBot", "/x/" + strings.Repeat("a", 20000) + "/qux", false},
		},
	},
}

// lineEndingFiles is ID_LinesNumbersAreCountedCorrectly: the same file with every kind of line
// ending must give the same policy. Line numbers are not part of our API; the policy is.
var lineEndingFiles = map[string]string{
	"unix":             "User-Agent: foo\nAllow: /some/path\nUser-Agent: bar\n\n\nDisallow: /\n",
	"dos":              "User-Agent: foo\r\nAllow: /some/path\r\nUser-Agent: bar\r\n\r\n\r\nDisallow: /\r\n",
	"mac":              "User-Agent: foo\rAllow: /some/path\rUser-Agent: bar\r\r\rDisallow: /\r",
	"no final newline": "User-Agent: foo\nAllow: /some/path\nUser-Agent: bar\n\n\nDisallow: /",
	"mixed":            "User-Agent: foo\nAllow: /some/path\r\nUser-Agent: bar\n\r\n\nDisallow: /",
}

func TestConformance(t *testing.T) {
	for _, suite := range []struct {
		name  string
		cases []conformanceCase
	}{{"RFC9309", rfcCases}, {"GoogleRobotsTest", googleCases}} {
		t.Run(suite.name, func(t *testing.T) {
			for _, tc := range suite.cases {
				t.Run(tc.name, func(t *testing.T) {
					r := Parse([]byte(tc.robots))
					for _, c := range tc.checks {
						if got := r.Allowed(c.agent, c.path); got != c.allowed {
							t.Errorf("Allowed(%q, %q) = %v, want %v", c.agent, c.path, got, c.allowed)
						}
					}
				})
			}
		})
	}
}

func TestLineEndings(t *testing.T) {
	for name, body := range lineEndingFiles {
		t.Run(name, func(t *testing.T) {
			r := Parse([]byte(body))
			// The Allow line ends foo's group, so bar starts its own: foo may fetch anything,
			// bar nothing; the blank lines before bar's Disallow do not end bar's group.
			for _, c := range []verdict{
				{"foo", "/some/path", true},
				{"foo", "/other", true},
				{"bar", "/some/path", false},
				{"bar", "/", false},
				{"baz", "/", true},
			} {
				if got := r.Allowed(c.agent, c.path); got != c.allowed {
					t.Errorf("Allowed(%q, %q) = %v, want %v", c.agent, c.path, got, c.allowed)
				}
			}
		})
	}
}

// TestByteOrderMark is ID_UTF8ByteOrderMarkIsSkipped, observed through the policy: a Disallow
// line only takes effect if the User-agent line before it was understood.
func TestByteOrderMark(t *testing.T) {
	tests := []struct {
		name, body string
		disallowed bool
	}{
		{"full BOM", "\xEF\xBB\xBFUser-Agent: foo\nDisallow: /AnyValue\n", true},
		{"partial BOM of 2", "\xEF\xBBUser-Agent: foo\nDisallow: /AnyValue\n", true},
		{"partial BOM of 1", "\xEFUser-Agent: foo\nDisallow: /AnyValue\n", true},
		{"broken BOM makes first line junk", "\xEF\x11\xBFUser-Agent: foo\nDisallow: /AnyValue\n", false},
		{"BOM only at the start", "User-Agent: foo\n\xEF\xBB\xBFDisallow: /AnyValue\n", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Parse([]byte(tc.body)).Allowed("foo", "/AnyValue"); got == tc.disallowed {
				t.Errorf("Allowed = %v, want %v", got, !tc.disallowed)
			}
		})
	}
}

// TestSitemaps is ID_NonStandardLineExample_Sitemap: Sitemap lines count wherever they are.
func TestSitemaps(t *testing.T) {
	const loc = "http://foo.bar/sitemap.xml"
	groups := "User-Agent: foo\nAllow: /some/path\nUser-Agent: bar\n\n\n"
	tests := []struct {
		name, body string
		want       []string
	}{
		{"after groups", groups + "Sitemap: " + loc + "\n", []string{loc}},
		{"before groups", "Sitemap: " + loc + "\n" + groups, []string{loc}},
		{"several, case-insensitive name, comment", "sitemap: " + loc + "\nSITEMAP: https://x.test/b.xml # b\n",
			[]string{loc, "https://x.test/b.xml"}},
		{"empty value ignored", "Sitemap:\n", nil},
		{"none", groups, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := Parse([]byte(tc.body))
			got := r.Sitemaps()
			if !slices.Equal(got, tc.want) {
				t.Errorf("Sitemaps() = %q, want %q", got, tc.want)
			}
			if len(got) > 0 {
				got[0] = "changed"
				if r.Sitemaps()[0] == "changed" {
					t.Error("Sitemaps() returned the Rules' own slice")
				}
			}
		})
	}
}

// TestProductToken covers ID_VerifyValidUserAgentsToObey from the other side: what our token
// extraction makes of the values Google calls valid and invalid.
func TestProductToken(t *testing.T) {
	tests := []struct{ in, want string }{
		{"strata/0.1 (+https://example.org/bot)", "strata"},
		{"strata", "strata"},
		{"Foobot", "Foobot"},
		{"Foobot-Bar", "Foobot-Bar"},
		{"Foo_Bar", "Foo_Bar"},
		{"", ""},
		{"\u30c4", ""},
		{"Foobot*", "Foobot"},
		{" Foobot ", "Foobot"},
		{"Foobot/2.1", "Foobot"},
		{"Foobot Bar", "Foobot"},
		{"Mozilla/5.0 (compatible; Googlebot/2.1)", "Mozilla"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			if got := ProductToken(tc.in); got != tc.want {
				t.Errorf("ProductToken(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}
