package gguf

import "github.com/headroom-planner/headroom/planner"

// linearAttention describes the Gated DeltaNet layers of a Qwen3-Next
// GGUF (nil for other architectures). llama.cpp marks layer i recurrent
// when (i+1) % <arch>.full_attention_interval != 0, the interval
// defaulting to 4 (src/llama-model.cpp, LLM_ARCH_QWEN3NEXT), and
// convert_hf_to_gguf.py stores the linear-attention geometry in the SSM
// keys: ssm.group_count = linear_num_key_heads, ssm.time_step_rank =
// linear_num_value_heads, ssm.state_size = linear_key_head_dim,
// ssm.inner_size = value heads × linear_value_head_dim, ssm.conv_kernel.
// The state per layer and sequence is n_v·d_k·d_v + (conv−1)(2·n_k·d_k +
// n_v·d_v) elements (modeling.md §2.4).
func linearAttention(k *keys, arch string, layers int) *planner.LinearAttention {
	if arch != "qwen3next" {
		return nil
	}
	interval := k.int("full_attention_interval")
	if interval <= 0 {
		interval = 4
	}
	n := 0
	for i := 0; i < layers; i++ {
		if (i+1)%interval != 0 {
			n++
		}
	}
	nk, nv := int64(k.int("ssm.group_count")), int64(k.int("ssm.time_step_rank"))
	dk, inner := int64(k.int("ssm.state_size")), int64(k.int("ssm.inner_size"))
	conv := int64(max(k.int("ssm.conv_kernel")-1, 0))
	// Real values are 16/32 heads of 128 and a kernel of 4; larger ones
	// are corrupt and would overflow the state count.
	if n == 0 || nv == 0 || nk > 1<<16 || nv > 1<<16 || dk > 1<<14 || inner > 1<<30 || conv > 1<<10 {
		return nil
	}
	dv := inner / nv
	return &planner.LinearAttention{Layers: n, StateElements: nv*dk*dv + conv*(2*nk*dk+nv*dv)}
}
