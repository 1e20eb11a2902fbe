// Package server is Headroom's web front end: a JSON REST API under /api/,
// an MCP endpoint at /mcp (streamable HTTP, JSON-RPC 2.0), and the browser
// page at /, all answering through package app, so a question asked over
// HTTP gets the answer — byte for byte the JSON — that `headroom ... --json`
// prints.
//
// Safe by default: New refuses a non-loopback address without a token
// (CheckAddr); request bodies are limited (Config.MaxBody, 413 beyond it);
// each request has a time limit (Config.Timeout); at most Config.MaxPlans
// answers are computed at once, with at most Config.MaxQueued waiting (503
// with Retry-After beyond that); no endpoint reads a file or follows a URL
// (models are catalog ids unless Config.AllowModelFiles); the log holds
// method, path, status and duration, never a header, a query or a body.
//
// The HTTP status mirrors the CLI's exit code: 200 for an answer (fits,
// fits with offload, plan that misses the SLO), 422 where the CLI exits 3
// (does not fit, no launch command), 400 where it exits 2, 404 for an
// unknown catalog id (with the closest matches as suggestions).
package server
