"""Bug: windows every layer whenever sliding_window is set, ignoring layer_types (hybrid local/global models) and
use_sliding_window: false (Qwen2)."""


def _sliding_layers(config: dict) -> int:
    layers = _required(config, "num_hidden_layers")
    return 0 if config.get("sliding_window") is None else layers
