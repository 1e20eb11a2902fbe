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

// dockerImage is the release's official image for the backend, pinned by
// tag, or "" and why the command stays native.
func dockerImage(in launchIn) (string, string) {
	s, b, rel := in.s, in.b, in.rel
	if b == Metal {
		return "", "containers on macOS cannot reach the Metal GPU; run natively"
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
		return "", fmt.Sprintf("%s has no official %s container image; run natively", rel.Name, b)
	}
	if b == ROCm && len(rel.ROCmTargets) > 0 && !containsString(rel.ROCmTargets, rocmTarget(s.Hardware)) {
		return "", fmt.Sprintf("the %s image is built for %s, not %s (%s): build the engine for it from source and run natively",
			img, strings.Join(rel.ROCmTargets, ", "), s.Hardware.Name, rocmTarget(s.Hardware))
	}
	return img, ""
}

// imageEntrypoint reports whether the engine's image starts the server
// itself, so that the command passes only its arguments: vllm/vllm-openai
// (the OpenAI API server), TGI (text-generation-launcher), llama.cpp's
// server images (llama-server) and Ollama's (ollama serve). SGLang's and
// TensorRT-LLM's images are shells: the command names the program.
func imageEntrypoint(p Policy) bool {
	switch p {
	case PolicyVLLM, PolicyTGI, PolicyLlamaCpp, PolicyOllama:
		return true
	}
	return false
}

// dockerize wraps a server command in in.image. Ports are published on
// 127.0.0.1 only; the server inside listens on all of the container's
// interfaces (in.host) so that the published port reaches it.
func dockerize(l Launch, in launchIn, cmd server) Launch {
	s, b := in.s, in.b
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
	for _, k := range sortedKeys(l.Env) { // one plan, one command
		d = append(d, "-e", k+"="+l.Env[k])
	}
	switch s.Engine.Policy {
	case PolicyVLLM, PolicyTRTLLM:
		if s.Engine.Policy == PolicyTRTLLM {
			// The options file is written in this folder.
			d = append(d, "--shm-size", "16g", "-v", "$PWD:/work", "-w", "/work")
		}
		d = append(d, "-p", "127.0.0.1:8000:8000")
	case PolicyTGI:
		d = append(d, "--shm-size", "1g", "-p", "127.0.0.1:8080:80")
	case PolicySGLang:
		d = append(d, "--shm-size", "32g", "-p", "127.0.0.1:30000:30000")
	case PolicyLlamaCpp:
		d = append(d, "-p", "127.0.0.1:8080:8080", "-v", "$PWD:/models")
	case PolicyOllama:
		// The GGUF and its Modelfile are in this folder, mounted at
		// /models; the model is created inside the named container.
		d = append(d, "--name", "ollama", "-p", "127.0.0.1:11434:11434", "-v", "ollama:/root/.ollama", "-v", "$PWD:/models")
	}
	l.Prefix = append(d, in.image)
	l.Argv = cmd.argv()
	if imageEntrypoint(s.Engine.Policy) {
		l.Argv = cmd.args
	}
	l.Env = nil
	l.Notes = append(l.Notes, "the port is published on 127.0.0.1 only; to serve others, publish it on an interface and add --api-key (vLLM, SGLang, llama-server)")
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
