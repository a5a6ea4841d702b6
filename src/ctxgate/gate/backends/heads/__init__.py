"""Trained heads of the local decision model: weights (JSON) and the features they read."""
