"""SciNCL: neighborhood contrastive learning of scientific document embeddings (Ostendorff et al., 2022)."""
__version__ = "0.1.0"
