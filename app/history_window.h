// The prompt history review window: every prompt sent, newest first, in a
// sortable table (HistoryModel, paged), with full-text search and filters
// (model, quantization, prompt / version / label, date range, finish reason,
// rating). Opening a row asks for its message in its conversation
// (openRequested: the main window selects the conversation and highlights
// the message); Re-run runs it again (RerunDialog, then a CompareView of the
// two answers); Experiment runs the filter's prompts against two versions.
#pragma once

#include <QWidget>

class QComboBox;
class QDateEdit;
class QLabel;
class QLineEdit;
class QPushButton;
class QTableView;
class QTimer;

namespace hearth::app {

class ChatBackend;
class ChatController;
class HistoryModel;
class StorageService;
struct HistoryFilter;

class HistoryWindow : public QWidget {
  Q_OBJECT

 public:
  // `backend` runs experiments (all their generations at once); may be null.
  HistoryWindow(StorageService* storage, ChatController* controller, ChatBackend* backend, QWidget* parent = nullptr);

  HistoryModel* model() const { return model_; }
  QTableView* table() const { return table_; }
  HistoryFilter currentFilter() const;

 public slots:
  void refresh();       // the filter values (models, prompts...) and the rows again
  void applyFilters();  // the fields as they are now
  void openSelected();
  void rerunSelected();     // asks how (RerunDialog), then runs it and shows the comparison
  void experimentWindow();  // the filter's prompts against two versions

 signals:
  void openRequested(qint64 conversation_id, qint64 message_id);

 private:
  void buildFilters();
  void loadChoices();
  qint64 selectedMessage() const;

  StorageService* storage_;
  ChatController* controller_;
  ChatBackend* backend_;
  HistoryModel* model_;
  QTableView* table_ = nullptr;
  QLineEdit* search_ = nullptr;
  QComboBox* model_filter_ = nullptr;
  QComboBox* quantization_ = nullptr;
  QComboBox* prompt_ = nullptr;
  QDateEdit* since_ = nullptr;
  QDateEdit* until_ = nullptr;
  QComboBox* finish_ = nullptr;
  QComboBox* rating_ = nullptr;
  QLabel* count_ = nullptr;
  QTimer* debounce_ = nullptr;  // typing in the search field filters once it pauses
};

}  // namespace hearth::app
