"""The export job's stages, one function each, in the order ``studio.export.pipeline`` runs them.

``options.check_options`` (no torch) -> ``load.load_source`` + ``load.probe_tokenizer`` / ``probe_processor`` ->
``inputs.build_example_inputs`` -> ``trace.export_graph`` (with its fallbacks) + ``trace.note_export`` ->
``check.check_exported`` -> ``check.run_parity`` + ``check.name_dims_after_parity`` -> ``parts.export_parts``
(``--split-modalities``) -> ``write.write_outputs`` -> ``write.close_report``. Each takes an ``ExportRun`` (the
checked options, config, signature, the report being filled and the temp folder) and plain values, so a test can
call one on a tiny model without running the others; a stage that fails records its Diagnosis and raises
``StageFailed``.
"""
