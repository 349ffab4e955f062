"""The system environment templates and service profiles that ship with the studio, shared with every
project; `manage.py system_profiles` installs them. GPU defaults are small (half a GPU, one GPU) so each fits
the demo project's quota (deserved 8, limit 16).

To change one, add a version (active versions are never edited) and point the profile at it: the command
creates what is missing and moves the profile, which bumps its revision."""

JUPYTER_README = """\
A JupyterLab server with a GPU share, in your project's namespace.

1. Launch it, then open **Notebook URL** from the outputs once the workload is *Running*.
2. Log in with the **Token** shown in the outputs (only your project's members can see it).

Work in `/home/jovyan/work`; the notebook's disk lives as long as the workload.
"""

LLM_README = """\
An OpenAI-compatible LLM server ([vLLM](https://docs.vllm.ai)) that scales from 1 to 3 replicas on
concurrent requests (8 per replica).

```
curl $ENDPOINT/completions -H 'Content-Type: application/json' \\
  -d '{"model": "<model>", "prompt": "Hello", "max_tokens": 16}'
```

Gated Hugging Face models need a **Hugging Face token**; it reaches the server as a Kubernetes Secret.
"""

PYTORCH_README = """\
A PyTorch batch job: give the command and its arguments, and the number of GPUs.
It runs to completion; its logs and metrics are on the workload's page.
"""

DISTRIBUTED_README = """\
A PyTorch job on several pods at once (a master and its workers, with `torchrun`), as Kubeflow's
Training Operator runs it: every pod starts together or none does, and the job completes when the master does.

Give the script's arguments, the number of **workers** besides the master, and the GPUs of each pod. The cluster
needs the Training Operator (`kubeflow.org`); the workload's page shows the pods by role.
"""

# Shared by the two PyTorch templates.
PYTORCH_IMAGE = {"name": "image", "type": "string", "default": "pytorch/pytorch:latest", "pattern": r"\S+",
                 "description": "Training image."}
JOB_OUTPUT = {"name": "job", "label": "Job", "expression": "{{ project.name }}/{{ workload.name }}"}

TEMPLATES = [
    {
        "name": "jupyter-notebook",
        "display_name": "Jupyter notebook",
        "description": "JupyterLab workspace with a GPU share and a per-launch login token.",
        "versions": [{
            "version": "1.0.0",
            "kind": "workspace",
            "spec_template": {
                "image": "{{ image }}",
                "args": "start-notebook.sh --ServerApp.base_url=/{{ project.name }}/{{ workload.name }}/8888",
                "compute": {"gpuDevicesRequest": 1, "gpuRequestType": "portion",
                            "gpuPortionRequest": "{{ gpu_portion }}", "cpuCoreRequest": "{{ cpu_cores }}",
                            "cpuMemoryRequest": "{{ memory }}"},
                "ports": [{"container": 8888, "serviceType": "ClusterIP", "name": "notebook",
                           "toolType": "jupyter-notebook"}],
                "exposedUrls": [{"container": 8888, "name": "notebook", "toolType": "jupyter-notebook"}],
                "environmentVariables": [{"name": "JUPYTER_TOKEN", "value": "{{ generated.token }}"}],
            },
            "variables": [
                {"name": "image", "type": "string", "default": "jupyter/base-notebook:latest",
                 "description": "Notebook image.", "pattern": r"\S+"},
                {"name": "gpu_portion", "type": "number", "default": 0.5, "min": 0.1, "max": 1,
                 "description": "Share of one GPU."},
                {"name": "cpu_cores", "type": "number", "default": 1, "min": 0.5, "max": 8,
                 "description": "CPU cores."},
                {"name": "memory", "type": "quantity", "default": "2Gi", "min": "512Mi", "max": "64Gi",
                 "description": "Memory."},
            ],
            "outputs": [
                {"name": "url", "label": "Notebook URL", "expression": "{{ workload.url }}"},
                {"name": "service_address", "label": "Service address", "expression": "{{ workload.serviceAddress }}"},
                {"name": "token", "label": "Token", "expression": "{{ generated.token }}", "sensitive": True},
            ],
        }],
    },
    {
        "name": "llm-inference-server",
        "display_name": "LLM inference server",
        "description": "vLLM's OpenAI-compatible server, autoscaled on concurrency.",
        "versions": [{
            "version": "1.0.0",
            "kind": "inference",
            "spec_template": {
                "image": "{{ image }}",
                "args": "--model {{ model }} --port 8000",
                "servingPort": {"container": 8000, "protocol": "http"},
                "autoscaling": {"minReplicas": 1, "maxReplicas": "{{ max_replicas }}", "metric": "concurrency",
                                "metricThreshold": 8},
                "compute": {"gpuDevicesRequest": "{{ gpus }}", "cpuMemoryRequest": "{{ memory }}"},
                "environmentVariables": [{"name": "HUGGING_FACE_HUB_TOKEN", "value": "{{ hf_token }}"}],
            },
            "variables": [
                {"name": "image", "type": "string", "default": "vllm/vllm-openai:latest", "pattern": r"\S+",
                 "description": "Server image."},
                {"name": "model", "type": "string", "default": "Qwen/Qwen2.5-0.5B-Instruct", "required": True,
                 "pattern": r"\S+", "description": "Hugging Face model to serve."},
                {"name": "gpus", "type": "integer", "default": 1, "min": 1, "max": 2,
                 "description": "GPUs per replica."},
                {"name": "max_replicas", "type": "integer", "default": 3, "min": 1, "max": 3,
                 "description": "Most replicas under load."},
                {"name": "memory", "type": "quantity", "default": "8Gi", "min": "1Gi", "max": "128Gi",
                 "description": "Memory per replica."},
                {"name": "hf_token", "type": "secret", "description": "Hugging Face token, for gated models."},
            ],
            "outputs": [
                {"name": "endpoint", "label": "OpenAI-compatible endpoint", "expression": "{{ workload.url }}/v1"},
                {"name": "service_address", "label": "Service address", "expression": "{{ workload.serviceAddress }}"},
                {"name": "model", "label": "Model", "expression": "{{ inputs.model }}"},
            ],
        }],
    },
    {
        "name": "pytorch-training",
        "display_name": "PyTorch training",
        "description": "A PyTorch job that runs a command to completion on whole GPUs.",
        "versions": [{
            "version": "1.0.0",
            "kind": "training",
            "spec_template": {
                "image": "{{ image }}",
                "command": "{{ command }}",
                "args": "{{ args }}",
                "compute": {"gpuDevicesRequest": "{{ gpus }}"},
            },
            "variables": [
                PYTORCH_IMAGE,
                {"name": "command", "type": "string", "default": "python", "required": True,
                 "description": "Command to run."},
                {"name": "args", "type": "string",
                 "default": "-c \"import torch; print(torch.__version__, torch.cuda.is_available())\"",
                 "description": "Arguments of the command."},
                {"name": "gpus", "type": "integer", "default": 1, "min": 0, "max": 8, "description": "GPUs."},
            ],
            "outputs": [
                JOB_OUTPUT,
                {"name": "command", "label": "Command", "expression": "{{ inputs.command }} {{ inputs.args }}"},
            ],
        }],
    },
    {
        "name": "pytorch-distributed",
        "display_name": "PyTorch distributed training",
        "description": "A PyTorchJob: a master and workers started together, each on whole GPUs.",
        "versions": [{
            "version": "1.0.0",
            "kind": "distributed",
            "spec_template": {
                "image": "{{ image }}",
                "command": "torchrun",
                "args": "{{ args }}",
                "distributedFramework": "PyTorch",
                "numWorkers": "{{ workers }}",
                "cleanPodPolicy": "Running",
                "compute": {"gpuDevicesRequest": "{{ gpus }}"},
            },
            "variables": [
                PYTORCH_IMAGE,
                {"name": "args", "type": "string", "default": "--nproc-per-node=1 train.py", "required": True,
                 "description": "Arguments of torchrun: its options, then the script and the script's own."},
                {"name": "workers", "type": "integer", "default": 1, "min": 1, "max": 7,
                 "description": "Worker pods besides the master."},
                {"name": "gpus", "type": "integer", "default": 1, "min": 0, "max": 8, "description": "GPUs per pod."},
            ],
            "outputs": [
                JOB_OUTPUT,
                {"name": "workers", "label": "Workers besides the master", "expression": "{{ inputs.workers }}"},
            ],
        }],
    },
]

# Icons of the system templates' profiles ship with PaaS Studio as static files (static/studio/profile-icons), so
# the catalog shows them offline; a profile on a system template (a clone included) gets its template's icon unless
# it names its own icon URL.
SYSTEM_ICONS = {name: f"studio/profile-icons/{name}.svg"
                for name in ("jupyter-notebook", "llm-inference-server", "pytorch-training", "pytorch-distributed")}

PROFILES = [
    {
        "name": "jupyter-notebook", "template": "jupyter-notebook", "version": "1.0.0",
        "display_name": "Jupyter Notebook", "service_type": "notebook",
        "description": "A JupyterLab notebook with half a GPU, ready in a minute.",
        "readme": JUPYTER_README,
        "labels": {"paas.example.com/service": "notebook"},
        "inputs": [{"name": "image", "override": "restricted", "allowedValues": [
            "jupyter/base-notebook:latest", "jupyter/scipy-notebook:latest", "jupyter/pytorch-notebook:latest"]}],
    },
    {
        "name": "llm-inference-server", "template": "llm-inference-server", "version": "1.0.0",
        "display_name": "LLM Inference Server", "service_type": "inference",
        "description": "Serve a Hugging Face model behind an OpenAI-compatible API, autoscaled 1-3 replicas.",
        "readme": LLM_README,
        "labels": {"paas.example.com/service": "llm"},
        "extra_config": {"VLLM_NO_USAGE_STATS": "1"},
        "inputs": [{"name": "image", "override": "not-allowed"}, {"name": "max_replicas", "visible": False}],
    },
    {
        "name": "pytorch-training", "template": "pytorch-training", "version": "1.0.0",
        "display_name": "PyTorch Training", "service_type": "jobs",
        "description": "Run a PyTorch training script to completion on one or more GPUs.",
        "readme": PYTORCH_README,
        "labels": {"paas.example.com/service": "training"},
        "extra_config": {"PYTHONUNBUFFERED": "1"},
    },
    {
        "name": "pytorch-distributed", "template": "pytorch-distributed", "version": "1.0.0",
        "display_name": "PyTorch Distributed Training", "service_type": "jobs",
        "description": "Train on a master and workers at once (Kubeflow PyTorchJob), one or more GPUs each.",
        "readme": DISTRIBUTED_README,
        "labels": {"paas.example.com/service": "training"},
        "extra_config": {"PYTHONUNBUFFERED": "1"},
    },
]
