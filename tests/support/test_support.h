// Everything the test support library offers, in one include: temporary directories
// removed after each test, whole-file reads, hand-made graphs, running the CLI.
#pragma once

#include "support/cli.h"
#include "support/files.h"
#include "support/graph_writer.h"
#include "support/temp_dir.h"
