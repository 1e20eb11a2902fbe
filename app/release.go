package app

import (
	"strings"

	"github.com/headroom-planner/headroom/planner"
)

// EngineReleases reads --engine-version for a plan or a comparison, which
// rank several engines: "vllm=0.6.0,llama.cpp=b4000" names each engine's
// release; a bare release ("0.6.0", "b4000") belongs to the engine named
// by forEngine (plan's --emit), else to the only engine in engines, else
// to llama.cpp when it is a build number (only llama.cpp numbers builds).
// A bare version with several engines ranked is a usage error asking which
// engine it is: "0.6.0" is a vLLM, an SGLang or an Ollama release, and
// predicting every engine at it would be wrong for all but one.
func EngineReleases(c *planner.Catalog, spec, forEngine string, engines []string) (map[planner.EngineID]string, error) {
	if strings.TrimSpace(spec) == "" {
		return nil, nil
	}
	out := map[planner.EngineID]string{}
	for _, item := range SplitList(spec) {
		name, ver, named := strings.Cut(item, "=")
		if !named {
			ver = item
		}
		ver = strings.TrimSpace(ver)
		if named && ver == "" {
			return nil, Usagef("engine-version %q: no release after =; want e.g. vllm=0.11.0", item)
		}
		r, err := planner.ParseRelease(ver)
		if err != nil {
			return nil, Usagef("engine-version %q: %w", item, err)
		}
		var id planner.EngineID
		switch {
		case named:
			e, err := c.FindEngine(strings.TrimSpace(name))
			if err != nil {
				return nil, Usagef("engine-version %q: %w", item, err)
			}
			id = e.ID
		default:
			if id, err = bareReleaseEngine(c, item, r, forEngine, engines); err != nil {
				return nil, err
			}
		}
		if prev, dup := out[id]; dup {
			return nil, Usagef("engine-version %q: %s already has release %s", item, id, prev)
		}
		if r.Build > 0 && !(id == planner.LlamaCpp || id == planner.IKLlamaCpp) {
			return nil, Usagef("engine-version %q: %s numbers its releases as versions (0.11.0), not builds", item, id)
		}
		out[id] = ver
	}
	return out, nil
}

// bareReleaseEngine is the engine a release given without one belongs to.
func bareReleaseEngine(c *planner.Catalog, item string, r planner.Release, forEngine string, engines []string) (planner.EngineID, error) {
	pick := forEngine
	if pick == "" && len(engines) == 1 {
		pick = engines[0]
	}
	if pick != "" {
		e, err := c.FindEngine(pick)
		if err != nil {
			return "", Usagef("engine-version %q: %w", item, err)
		}
		return e.ID, nil
	}
	if r.Build > 0 {
		return planner.LlamaCpp, nil
	}
	return "", Usagef("engine-version %q: several engines are ranked and %q could be a release of more than one; name it (vllm=%s), or pick the engine with --emit or --engines", item, item, item)
}
