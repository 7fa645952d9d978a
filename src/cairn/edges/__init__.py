"""The edge builder: causal, temporal, tag and semantic edges between breadcrumbs."""
