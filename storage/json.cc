// PLACEHOLDER: implementation in progress.
