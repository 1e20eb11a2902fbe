// Package planner is the bottom layer of Headroom: the vocabulary of devices,
// models, quantizations, KV-cache types and engines, and the pure models of
// memory and speed that answer "can I run it?", "how fast?" and "what should
// I run?".
//
// planner does no I/O and imports no other Headroom package. Every formula
// names its source in a comment: an engine's source file at a commit, a
// datasheet, or a fitted profile. The reference notes the formulas were taken
// from are summarised in docs/modeling.md.
//
// Units are typed (Bytes, Tokens, TokensPerSecond, Params) so that no bare
// integer crosses a package boundary.
package planner
