// The prompt library: prompts by name, each save an immutable new version
// (text and note), the versions of the selected prompt with their labels,
// labels set on a version, and pinning a version or a label to the open
// conversation (through the ChatController: it applies from the next message
// on), revert, archive, a word diff of any two versions (PromptDiffView) and
// the selected version's metrics (answers, median TTFT and decode tok/s,
// median length, finish reasons, ratings). Reads and writes go through the
// StorageService (storage thread); the lists are QStandardItemModels
// refreshed from the store after each write.
#pragma once

#include <QWidget>

#include <map>

#include "store/records.h"

class QLabel;
class QLineEdit;
class QListView;
class QPlainTextEdit;
class QPushButton;
class QStandardItemModel;

namespace hearth::app {

class ChatController;
class PromptDiffView;
class StorageService;

class PromptLibraryPanel : public QWidget {
  Q_OBJECT

 public:
  PromptLibraryPanel(StorageService* storage, ChatController* controller, QWidget* parent = nullptr);

  QString selectedPrompt() const;
  int selectedVersion() const;  // 0: none

 public slots:
  void reload();
  void selectPrompt(const QString& name);
  void selectVersion(int version);
  void createPrompt();    // the name field, the text editor's text as version 1
  void saveVersion();     // the text editor's text as the selected prompt's next version
  void setLabel();        // the label field on the selected version
  void pinVersion();      // the selected version, by number
  void pinLabel();        // the label field (empty: latest) of the selected prompt
  void revertVersion();   // a new version equal to the selected one
  void toggleArchived();  // archives the selected prompt (or brings it back)
  void setShowArchived(bool show);
  // A window with the word diff of two versions of the selected prompt.
  PromptDiffView* compareVersions(int old_version = 0, int new_version = 0);

 signals:
  void promptsChanged();                 // a reload finished
  void metricsShown(qint64 version_id);  // the selected version's metrics are on show

 private:
  struct Version {
    store::PromptVersion version;
    QStringList labels;
  };
  void showVersions(const std::vector<Version>& versions);
  void loadVersions(const QString& name);
  void showMetrics(qint64 version_id);

  StorageService* storage_;
  ChatController* controller_;
  QStandardItemModel* prompts_;
  QStandardItemModel* versions_;
  QListView* prompt_list_ = nullptr;
  QListView* version_list_ = nullptr;
  QLineEdit* name_ = nullptr;
  QPlainTextEdit* text_ = nullptr;
  QLineEdit* note_ = nullptr;
  QLineEdit* label_ = nullptr;
  QLabel* pinned_ = nullptr;
  QLabel* metrics_ = nullptr;
  QPushButton* archive_ = nullptr;
  bool show_archived_ = false;
  std::map<QString, bool> archived_;  // by prompt name, as last listed
  QString wanted_prompt_;             // selected once the list has it
  int wanted_version_ = 0;
};

}  // namespace hearth::app
