// PLACEHOLDER until the neighbor cache lands.
