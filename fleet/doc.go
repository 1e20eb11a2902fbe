// Package fleet turns a plan into Kubernetes manifests for the engines
// that serve it: a Deployment and a Service for a replica set of
// single-node servers, a LeaderWorkerSet for vLLM and SGLang spanning
// several nodes, and a KServe InferenceService when asked.
//
// The manifests are built from the upstream API types (k8s.io/api apps/v1
// and core/v1, sigs.k8s.io/lws/api/leaderworkerset/v1) and encoded as
// YAML through sigs.k8s.io/yaml, so a field the API server does not know
// cannot be written. KServe's Go types pull in most of Knative and the
// Kubernetes client, so InferenceService is a minimal typed struct
// (kserve.go) mirroring the CRD fields emitted, with their source.
//
// The container's image and arguments are planner.ContainerFor's: the
// same flags as the plan's docker command, checked against the engine's
// flag table for its release.
//
// Fleet does no I/O: Manifests returns file names and bytes.
package fleet
