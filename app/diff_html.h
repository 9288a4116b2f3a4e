// A word diff (store/word_diff.h) as two HTML texts side by side: the old
// one with its deleted words struck out in red, the new one with its
// inserted words in green; equal words plain. For the prompt library's
// version diff and the compare view's answers.
#pragma once

#include <QString>

#include <vector>

#include "store/word_diff.h"

namespace hearth::app {

struct DiffHtml {
  QString old_html;
  QString new_html;
  int deleted_words = 0;
  int inserted_words = 0;
};

DiffHtml side_by_side_html(const std::vector<store::DiffOp>& ops);

}  // namespace hearth::app
