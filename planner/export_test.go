package planner

// RowEfficiency exposes rowEfficiency to the catalog-backed tests in
// package planner_test (which may import profiles; this package may not).
var RowEfficiency = rowEfficiency

// PrefillBound exposes prefillBound for the same tests.
var PrefillBound = prefillBound
