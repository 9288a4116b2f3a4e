// chat_template_render TEMPLATE.jinja INPUTS.json: renders a chat template
// with the engine's interpreter and writes the result to stdout byte for byte
// (the C++ side of the jinja2 parity test, render_oracle.py).
// Exit status: 0 rendered; 3 the template failed to parse or render (the
// message on stderr: raise_exception's own text when the template raised it);
// 2 usage or I/O.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "engine/chat/chat_template.h"

namespace {

bool read_file(const char* path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  out = ss.str();
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: chat_template_render TEMPLATE.jinja INPUTS.json\n";
    return 2;
  }
  std::string source;
  std::string json;
  if (!read_file(argv[1], source) || !read_file(argv[2], json)) {
    std::cerr << "cannot read " << argv[1] << " or " << argv[2] << "\n";
    return 2;
  }
  auto inputs = hearth::chat::inputs_from_json(json);
  if (!inputs) {
    std::cerr << inputs.error().message << "\n";
    return 2;
  }
  auto tpl = hearth::chat::ChatTemplate::parse(source);
  if (!tpl) {
    std::cerr << tpl.error().message << "\n";
    return 3;
  }
  auto text = tpl->render(*inputs);
  if (!text) {
    std::cerr << text.error().message << "\n";
    return 3;
  }
  std::fwrite(text->data(), 1, text->size(), stdout);
  return 0;
}
