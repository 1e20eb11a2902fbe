// Package hf reads Hugging Face model descriptions: a config.json, or a
// model directory whose safetensors headers (or shard index) give the
// weights' exact bytes.
//
// ReadConfig maps the transformers config fields of modeling.md §0 onto a
// planner.Model: num_hidden_layers, hidden_size, intermediate_size (the
// per-expert moe_intermediate_size for MoE models), num_attention_heads,
// num_key_value_heads (absent means MHA), head_dim (absent means
// hidden/heads, left to planner), vocab_size, max_position_embeddings,
// tie_word_embeddings, torch_dtype or dtype, the expert counts under their
// several names, sliding-window layouts (layer_types,
// sliding_window_pattern, use_sliding_window with max_window_layers), MLA
// ranks, and quantization_config, named with the catalog's quant ids.
// Multimodal configs are read through their text_config. Without weights,
// parameter counts are estimated from the geometry (estimateParams
// documents the formula).
//
// ReadDir adds the weights: each safetensors file starts with an 8-byte
// little-endian length and a JSON header giving every tensor's dtype,
// shape and byte range, so exact weight bytes are known without reading
// the weights. Headers are bounded by the file size and by the format's
// own 100 MB limit.
//
// Malformed input gives an error naming the file and, for JSON, the line
// and column; it never panics.
package hf
