package hf

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/headroom-planner/headroom/planner"
)

// GenericNote labels a model whose architecture was estimated from its
// tensor shapes rather than read from a config Headroom understands.
const GenericNote = "generic decoder estimate from the tensor shapes (architecture not recognised; head dimension assumed)"

// errNoGeometry says the tensors do not show a decoder's geometry.
var errNoGeometry = errors.New("the tensors show no token embedding and numbered layers")

// layerIndex finds a layer number in a tensor name (model.layers.12.,
// transformer.h.12., blocks.12.).
var layerIndex = regexp.MustCompile(`(?:^|\.)(?:layers|h|blocks|layer|decoder\.layers)\.(\d{1,4})\.`)

// genericModel estimates a decoder from safetensors tensors alone: layers
// from the highest layer number, vocabulary and width from the largest 2-D
// embedding, the MLP width from the first layer's widest projection, and
// heads from the query and key projections with a head dimension of 128
// (64 when the widths are not multiples of 128). Params are the exact
// element count. The result carries GenericNote.
func genericModel(ts []planner.Tensor, id, modelType string) (planner.Model, error) {
	layers, vocab, hidden := 0, 0, 0
	for _, t := range ts {
		if m := layerIndex.FindStringSubmatch(t.Name); m != nil {
			if i, err := strconv.Atoi(m[1]); err == nil {
				layers = max(layers, i+1)
			}
		}
		isEmbed := strings.Contains(t.Name, "embed") || strings.Contains(t.Name, "wte.")
		if isEmbed && len(t.Shape) == 2 && int(t.Shape[0]) > vocab {
			vocab, hidden = int(t.Shape[0]), int(t.Shape[1])
		}
	}
	if layers == 0 || vocab == 0 || hidden == 0 || layers > maxLayers || hidden > maxWidth || vocab > maxVocab {
		return planner.Model{}, errNoGeometry
	}
	m := planner.Model{ID: id, Name: id, Arch: modelType, Layers: layers, Hidden: hidden, Vocab: vocab, Notes: GenericNote}
	var elems int64
	hasHead := false
	qOut, kOut, ffn := 0, 0, 0
	for _, t := range ts {
		elems += t.Elements
		n := strings.ToLower(t.Name)
		hasHead = hasHead || strings.HasPrefix(n, "lm_head.") || strings.Contains(n, "output.weight")
		if len(t.Shape) != 2 || !strings.HasSuffix(n, ".weight") || layerOf(n) != 0 {
			continue
		}
		out, in := int(t.Shape[0]), int(t.Shape[1])
		switch {
		case strings.Contains(n, "q_proj"):
			qOut = out
		case strings.Contains(n, "k_proj"):
			kOut = out
		case in == hidden && out != hidden && (strings.Contains(n, "mlp") || strings.Contains(n, "ffn") || strings.Contains(n, "fc")):
			ffn = max(ffn, out)
		}
		if strings.Contains(n, "gate_proj") || strings.Contains(n, "gate_up_proj") {
			m.GatedMLP = true
		}
	}
	if qOut == 0 {
		qOut = hidden
	}
	if kOut == 0 {
		kOut = qOut
	}
	hd := 128
	if qOut%128 != 0 || kOut%128 != 0 {
		hd = 64
	}
	m.HeadDim, m.Heads, m.KVHeads, m.FFN = hd, max(qOut/hd, 1), max(kOut/hd, 1), ffn
	m.TiedEmbeddings = !hasHead
	m.Params, m.ActiveParams = planner.Params(elems), planner.Params(elems)
	return m, nil
}

// layerOf is the layer number in a tensor name, -1 when there is none.
func layerOf(name string) int {
	if m := layerIndex.FindStringSubmatch(name); m != nil {
		if i, err := strconv.Atoi(m[1]); err == nil {
			return i
		}
	}
	return -1
}

// fallbackGeneric is FromParts' way out when config.json does not give a
// decoder's geometry but the safetensors headers do.
func fallbackGeneric(p Parts, name string, cfgErr error) (planner.Model, error) {
	if len(p.Tensors) == 0 {
		return planner.Model{}, cfgErr
	}
	var top struct {
		ModelType string `json:"model_type"`
	}
	_ = json.Unmarshal(p.Config, &top) // the model type only labels the estimate
	m, err := genericModel(p.Tensors, idFrom(name), top.ModelType)
	if err != nil {
		return planner.Model{}, fmt.Errorf("%w; and from the safetensors headers: %w", cfgErr, err)
	}
	w := weights{tensors: p.Tensors, source: p.WeightsSource}
	for _, t := range p.Tensors {
		w.bytes += t.Bytes
	}
	m.FileBytes, m.Tensors = w.bytes, p.Tensors
	m.Source = "safetensors headers of " + name + " (config.json not understood)"
	return m, nil
}
