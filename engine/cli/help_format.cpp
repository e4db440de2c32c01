#include "engine/cli/help_format.hpp"

#include <sstream>
#include <string>

namespace strata {

namespace {

class HelpFormatter : public CLI::Formatter {
 public:
  std::string make_expanded(const CLI::App* sub) const override {
    std::string name = sub->get_name();
    for (const CLI::App* p = sub->get_parent(); p != nullptr; p = p->get_parent()) name = p->get_name() + " " + name;
    std::string usage = make_usage(sub, name);
    const std::string label = get_label("Usage") + ": ";
    if (usage.starts_with(label)) usage.erase(0, label.size());
    std::ostringstream out;
    out << "\n" << name << ": " << sub->get_description() << "\n  " << usage << "\n";
    for (const CLI::Option* opt : sub->get_options()) {
      if (opt == sub->get_help_ptr() || opt == sub->get_help_all_ptr()) continue;
      out << make_option(opt, !opt->nonpositional());
    }
    return out.str();
  }
};

}  // namespace

std::shared_ptr<CLI::Formatter> help_formatter() { return std::make_shared<HelpFormatter>(); }

}  // namespace strata
