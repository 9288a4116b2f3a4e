// Two versions of a prompt side by side with their word diff highlighted
// (store::diff_prompt_versions): deleted words struck out on the left,
// inserted ones marked on the right. Any two versions, chosen in the two
// lists; opened from the prompt library.
#pragma once

#include <QWidget>

class QComboBox;
class QLabel;
class QTextBrowser;

namespace hearth::app {

class StorageService;

class PromptDiffView : public QWidget {
  Q_OBJECT

 public:
  PromptDiffView(StorageService* storage, const QString& prompt, QWidget* parent = nullptr);

  void showVersions(int old_version, int new_version);
  bool ready() const { return ready_; }
  int deletedWords() const { return deleted_; }
  int insertedWords() const { return inserted_; }
  QString oldHtml() const;
  QString newHtml() const;

 signals:
  void diffShown();

 private:
  void diffChosen();

  StorageService* storage_;
  QString prompt_;
  QComboBox* old_ = nullptr;
  QComboBox* new_ = nullptr;
  QLabel* summary_ = nullptr;
  QTextBrowser* old_text_ = nullptr;
  QTextBrowser* new_text_ = nullptr;
  int deleted_ = 0, inserted_ = 0;
  bool ready_ = false;
  int want_old_ = 0, want_new_ = 0;  // chosen once the versions are listed
};

}  // namespace hearth::app
