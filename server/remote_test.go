package server

import (
	"encoding/json"
	"testing"

	"github.com/headroom-planner/headroom/app"
	"github.com/headroom-planner/headroom/profiles/hub"
	"github.com/headroom-planner/headroom/profiles/hub/hubtest"
)

// A Hub repository in a request is refused unless the server's user
// allowed remote models; allowed, it is read (headers only) like fit -m.
func TestRemoteModelsOnlyWhenAllowed(t *testing.T) {
	fake := hubtest.New()
	t.Cleanup(fake.Close)
	exp, err := fake.Standard()
	if err != nil {
		t.Fatal(err)
	}
	body := `{"model":"Qwen/Qwen2.5-72B-Instruct-AWQ","hardware":"nvidia-rtx-4090","devices":2}`

	closed := start(t, Config{})
	if st, got := closed.post(t, "/api/fit", body); st != 404 && st != 400 {
		t.Errorf("remote model without --allow-remote-models: status %d: %s", st, got)
	}
	if n := fake.Counters().Requests; n != 0 {
		t.Errorf("the server reached the Hub %d times without being allowed to", n)
	}

	a, err := app.Open(app.Options{NoUserDirs: true, CalibrationDir: t.TempDir(), Remote: true,
		Hub: hub.Options{Endpoint: fake.HubURL(), OllamaRegistry: fake.OllamaURL(), CacheDir: t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	open := startApp(t, a, Config{AllowRemoteModels: true})
	st, got := open.post(t, "/api/fit", body)
	var f app.FitJSON
	if err := json.Unmarshal(got, &f); err != nil || st != 200 {
		t.Fatalf("allowed: status %d, %v: %s", st, err, got)
	}
	if f.Scenario.Quant != "awq-int4" || int64(f.Fit.WeightBytes) != exp.QwenAWQ {
		t.Errorf("allowed: quant %q, weight bytes %d; want awq-int4, %d", f.Scenario.Quant, f.Fit.WeightBytes, exp.QwenAWQ)
	}
	if st, _ := open.post(t, "/api/fit", `{"model":"/etc/passwd","hardware":"nvidia-rtx-4090"}`); st == 200 {
		t.Error("a file path was read although only remote models are allowed")
	}
}
