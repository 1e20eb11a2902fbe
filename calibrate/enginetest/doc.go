// Package enginetest runs a real inference engine in tests: it writes small
// llama GGUF models with random weights (profiles/gguf), serves them with
// Ollama on 127.0.0.1, and hands back the URL and model names.
//
// The tests of this package, and any test that calls ServeModels, run only
// when HEADROOM_OLLAMA is set: to 1 (use `ollama` from PATH) or to the path
// of an ollama binary. Without it they skip, saying how to enable them;
// with it and no usable binary they fail. `.ci/run` installs Ollama v0.6.5
// and scripts/test.sh sets HEADROOM_OLLAMA=1 for its integration step:
//
//	HEADROOM_OLLAMA=1 go test ./calibrate/enginetest/ -v
//
// The server is a child process in its own process group under
// timeout(1): ServeModels kills the group (server and model runners) when
// the test ends, and the group dies by itself after ServeLimit or when the
// test process dies, so no engine outlives its test.
//
// The package builds on Linux only (its servers run in a process group
// that dies with the test); elsewhere it is empty.
package enginetest
