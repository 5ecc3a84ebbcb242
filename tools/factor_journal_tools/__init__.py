"""The project's tools around the extractor, kept out of the deployed functions (``functions/`` is what
``firebase deploy`` uploads; nothing there imports this package, tests/test_architecture.py checks):

* ``evaluate``: ``make eval``, the labelled corpus (``eval/corpus``) through the real pipeline on the emulators;
* ``train``: ``make train-extractor``, the semantic extractor's models trained on the corpus's dev split;
* ``catalog_check``: factor pairs whose descriptions the embedded model can hardly tell apart.

They use the runtime package (``factor_journal``) as any caller does; it never uses them.
"""
