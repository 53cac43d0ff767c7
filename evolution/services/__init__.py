"""The platform's services (writes) every kind uses: the campaign lifecycle (``campaigns``), the
sandbox door (``execution``), the in-process runner (``runner``). A method's own services live in
its package (BenchEvolver's in ``evolution/benchevolver/``)."""
