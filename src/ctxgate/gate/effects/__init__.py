"""Tool effects: the effect class of every call, from the strongest evidence available."""

from ctxgate.gate.effects.model import Effect, EffectClass, EffectSource

__all__ = ["Effect", "EffectClass", "EffectSource"]
