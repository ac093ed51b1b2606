package crawler

// Progress returns how far the stage has come: done URLs of total, the URLs it will have taken out
// of the due set when it ends. Due counts every URL that was or became due, but the selective rule
// takes a hub's quiet subtree out without a fetch (SkippedSelective), and a budget ends the run
// after Budget page fetches however many are due — besides the URLs blocked, filtered or failed
// along the way, which spend none of it. So a run that skips pages or spends its budget reaches
// done = total. done may pass Due (a URL fetched again after a Retry-After, the children of a hub
// the selective rule opened, which are not added to Due); total never falls below done.
func (s Stats) Progress() (done, total int) {
	total = s.Due - s.SkippedSelective
	if s.Budget > 0 {
		total = min(total, s.Budget+s.Done-s.NewFetched-s.KnownFetched)
	}
	return s.Done, max(total, s.Done, 0)
}
