"""The web console: static pages served at ``/`` that read Cairn through its own HTTP API
with the caller's token, so that they show exactly what that token may see and nothing the
API does not already serve. No build step and no Node at run time: plain ES modules."""
