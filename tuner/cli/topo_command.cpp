#include "commands.h"
namespace nccltune::cli {
void add_topo_command(CLI::App& app, Command& command) { (void)app; (void)command; }
void add_check_command(CLI::App& app, Command& command) { (void)app; (void)command; }
}
