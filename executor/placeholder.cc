// PLACEHOLDER until the executor lands.
