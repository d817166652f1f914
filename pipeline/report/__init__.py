"""What a finished run did, for people and schedulers: ``report.json``, ``report.html``, explain, sample."""
