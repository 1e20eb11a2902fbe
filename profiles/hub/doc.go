// Package hub resolves model references that live on the network into
// planner models, without downloading weights:
//
//   - Hugging Face repositories (ORG/NAME, ORG/NAME@REVISION,
//     https://huggingface.co/ORG/NAME): the Hub's model API gives the file
//     list and the revision's commit; config.json, hf_quant_config.json and
//     model.safetensors.index.json are read whole (they are kilobytes), and
//     each safetensors shard only as far as its header (an 8-byte length,
//     then JSON), by HTTP Range requests. Weight bytes are the exact sum of
//     the tensors the headers list.
//   - GGUF files on the Hub (hf.co/ORG/NAME:QUANT, or ORG/NAME-GGUF with a
//     quant): the file whose name carries the quant (all shards of a split
//     file), each read only as far as its GGUF header, the range growing
//     as the parser needs (vocabularies make headers several MB).
//   - Ollama tags (ollama:NAME:TAG): the registry manifest, then the GGUF
//     header of its model layer, by ranges.
//
// Every read is bounded: Options.MaxFileBytes per file and
// Options.MaxRefBytes per reference, counted on the bytes actually
// received, so a server that ignores Range (answering 200 with the whole
// body) costs at most the cap before the connection is dropped. Redirects
// to other hosts (the Hub sends LFS files to a CDN) are followed without
// the token, which goes only to the Hub's own host. Connections time out,
// a stalled body is abandoned after Options.StallTimeout, and cancelling
// the context stops every request.
//
// What was read (API answers, small files, header prefixes) is kept in a
// Cache keyed by repository, commit and file, so a second resolution works
// without the network and Options.Offline uses nothing else.
//
// Errors are typed so that front ends can add advice: *NotFoundError (no
// such repository, revision, file or tag), *AuthError (gated or private:
// accept the licence on the Hub page and set HF_TOKEN), ErrOffline (offline
// and not cached), ErrNoWeights and ErrCapExceeded.
package hub
