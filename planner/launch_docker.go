package planner

import (
	"fmt"
	"strings"
)

// rocmDocker are the options AMD's ROCm containers need (ROCm docs,
// "Running ROCm Docker containers"; vLLM's and SGLang's AMD guides):
// the compute and render devices, the video group, and ptrace/seccomp
// for the HIP runtime's debugger hooks.
var rocmDocker = []string{"--device", "/dev/kfd", "--device", "/dev/dri", "--group-add", "video",
	"--cap-add=SYS_PTRACE", "--security-opt", "seccomp=unconfined"}

// dockerize wraps a launch in the release's official image, pinned by
// tag. Ports are published on 127.0.0.1 only; the server inside listens
// on all of the container's interfaces so that the published port reaches
// it.
func dockerize(l Launch, in launchIn) Launch {
	s, b, rel := in.s, in.b, in.rel
	if b == Metal {
		l.Notes = append(l.Notes, "containers on macOS cannot reach the Metal GPU; run natively")
		return l
	}
	img := rel.Image
	switch {
	case s.Engine.Policy == PolicyLlamaCpp:
		img = llamaImage(rel, b)
	case b == ROCm:
		img = rel.ROCmImage
	case b == CPU && !s.Engine.IsGGML():
		img = "" // the release images are GPU builds (vLLM's CPU image is built from source)
	}
	if img == "" {
		l.Notes = append(l.Notes, fmt.Sprintf("%s has no official %s container image; run natively", rel.Name, b))
		return l
	}
	if b == ROCm && len(rel.ROCmTargets) > 0 && !containsString(rel.ROCmTargets, rocmTarget(s.Hardware)) {
		l.Notes = append(l.Notes, fmt.Sprintf("the %s image is built for %s, not %s (%s): build the engine for it from source and run natively",
			img, strings.Join(rel.ROCmTargets, ", "), s.Hardware.Name, rocmTarget(s.Hardware)))
		return l
	}
	var gpu []string
	switch b {
	case CUDA:
		gpu = []string{"--gpus", "all"}
	case ROCm:
		gpu = rocmDocker
	case Vulkan, SYCL:
		gpu = []string{"--device", "/dev/dri"}
	}
	d := append([]string{"docker", "run", "--rm"}, gpu...)
	d = append(d, "--ipc=host")
	switch s.Engine.Policy {
	case PolicyTGI:
		// The TGI image sets HF_HOME=/data (its Dockerfile): the host's
		// cache goes there, or every run downloads the weights again.
		d = append(d, "-v", "$HOME/.cache/huggingface:/data")
	case PolicyVLLM, PolicySGLang, PolicyTRTLLM:
		d = append(d, "-v", "$HOME/.cache/huggingface:/root/.cache/huggingface")
	}
	if !s.Engine.IsGGML() {
		// Gated repos (meta-llama/…): pass the shell's token through
		// (huggingface_hub reads HF_TOKEN; unset, it is simply empty).
		d = append(d, "-e", "HF_TOKEN")
	}
	env := map[string]string{}
	for k, v := range l.Env {
		env[k] = v
	}
	if s.Engine.Policy == PolicyOllama {
		env["OLLAMA_HOST"] = "0.0.0.0:11434"
	}
	for _, k := range sortedKeys(env) { // one plan, one command
		d = append(d, "-e", k+"="+env[k])
	}
	args := l.Argv
	switch s.Engine.Policy {
	case PolicyVLLM:
		d = append(d, "-p", "127.0.0.1:8000:8000", img)
		args = append([]string{"--model"}, args[2:]...) // the image's entrypoint is the server
		args = replaceFlag(args, "--host", "0.0.0.0")
	case PolicyTGI:
		d = append(d, "--shm-size", "1g", "-p", "127.0.0.1:8080:80", img)
		args = replaceFlag(args[1:], "--hostname", "0.0.0.0")
		args = replaceFlag(args, "--port", "80")
	case PolicySGLang:
		d = append(d, "--shm-size", "32g", "-p", "127.0.0.1:30000:30000", img)
		args = replaceFlag(args, "--host", "0.0.0.0")
	case PolicyTRTLLM:
		d = append(d, "--shm-size", "16g", "-v", "$PWD:/work", "-w", "/work", "-p", "127.0.0.1:8000:8000", img)
		args = replaceFlag(args, "--host", "0.0.0.0")
	case PolicyLlamaCpp:
		d = append(d, "-p", "127.0.0.1:8080:8080", "-v", "$PWD:/models", img)
		args = replaceFlag(args[1:], "--host", "0.0.0.0")
		// The GGUF is in the mounted folder (llama.cpp docs/docker.md:
		// -m /models/…), not in the image's working directory.
		for i := 0; i+1 < len(args); i++ {
			if args[i] == "-m" && !strings.HasPrefix(args[i+1], "/") {
				args[i+1] = "/models/" + strings.TrimPrefix(args[i+1], "./")
			}
		}
	case PolicyOllama:
		// The GGUF and its Modelfile are in this folder, mounted at
		// /models; the model is created inside the named container.
		d = append(d, "--name", "ollama", "-p", "127.0.0.1:11434:11434", "-v", "ollama:/root/.ollama", "-v", "$PWD:/models", img)
		args = nil
		native := ollamaCreateNote(in, false)
		for i, n := range l.Notes {
			if n == native {
				l.Notes[i] = ollamaCreateNote(in, true)
			}
		}
	}
	l.Notes = append(l.Notes, "the port is published on 127.0.0.1 only; to serve others, publish it on an interface and add --api-key (vLLM, SGLang, llama-server)")
	l.Env = nil
	l.Prefix = d
	l.Argv = args
	return l
}

func containsString(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}
