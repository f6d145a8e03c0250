"""A tiny custom HF model type whose forward branches on tensor values (the diagnosis demo).

It is a real ``PreTrainedModel`` registered with ``AutoConfig`` / ``AutoModel``, so its folder loads through
the same path as any HF model. Its pooler takes a "no padding" fast path chosen by a Python ``if`` on a
tensor: TorchScript tracing bakes in one branch (parity then fails on padded inputs) and the dynamo
exporter refuses to guard on the data-dependent value.
"""

from __future__ import annotations

import torch
from torch import nn
from transformers import AutoConfig, AutoModel, PretrainedConfig, PreTrainedModel
from transformers.modeling_outputs import BaseModelOutputWithPooling

MODEL_TYPE = "studio-branchy"


class BranchyConfig(PretrainedConfig):
    model_type = MODEL_TYPE

    def __init__(self, vocab_size: int = 64, hidden_size: int = 32, **kwargs):  # type: ignore[no-untyped-def]
        self.vocab_size = vocab_size
        self.hidden_size = hidden_size
        super().__init__(**kwargs)


class BranchyPooler(nn.Module):
    def __init__(self, hidden: int) -> None:
        super().__init__()
        self.dense = nn.Linear(hidden, hidden)

    def forward(self, hidden: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        lengths = attention_mask.sum(-1)
        if bool((lengths == attention_mask.shape[1]).all()):  # fast path when nothing is padded
            pooled = hidden.mean(1)
        else:
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / lengths.unsqueeze(-1).to(hidden.dtype)
        return torch.tanh(self.dense(pooled))


class BranchyModel(PreTrainedModel):
    config_class = BranchyConfig
    base_model_prefix = "branchy"
    main_input_name = "input_ids"

    def __init__(self, config: BranchyConfig) -> None:
        super().__init__(config)
        self.embeddings = nn.Embedding(config.vocab_size, config.hidden_size)
        self.encoder = nn.Sequential(nn.Linear(config.hidden_size, config.hidden_size), nn.GELU())
        self.pooler = BranchyPooler(config.hidden_size)
        self.post_init()

    def _init_weights(self, module: nn.Module) -> None:
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, std=0.2)
        if isinstance(module, nn.Linear) and module.bias is not None:
            nn.init.zeros_(module.bias)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None,
                **kwargs) -> BaseModelOutputWithPooling:  # type: ignore[no-untyped-def]
        if attention_mask is None:
            attention_mask = torch.ones_like(input_ids)
        hidden = self.encoder(self.embeddings(input_ids))
        return BaseModelOutputWithPooling(last_hidden_state=hidden, pooler_output=self.pooler(hidden, attention_mask))


def register() -> None:
    """Idempotent: make ``AutoConfig`` / ``AutoModel`` know the custom type."""
    try:
        AutoConfig.register(MODEL_TYPE, BranchyConfig)
    except ValueError:
        pass
    try:
        AutoModel.register(BranchyConfig, BranchyModel)
    except ValueError:
        pass


register()
