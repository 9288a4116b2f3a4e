// Experiments: the prompts of a history filter (the first N) against two
// prompt versions. Run starts an ExperimentRunner (all 2N generations at
// once); the table shows one row per prompt with each version's answer and
// measurements side by side, and a last row with the aggregates (median
// TTFT and decode tok/s, mean answer length, finish reasons, per version).
// Past experiments are listed and reopen from the store.
#pragma once

#include <QWidget>

#include "store/review_records.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QListView;
class QPushButton;
class QSpinBox;
class QStandardItemModel;
class QTableView;

namespace hearth::app {

class ChatBackend;
class ExperimentRunner;
class StorageService;

class ExperimentWindow : public QWidget {
  Q_OBJECT

 public:
  enum Column { kPrompt, kAnswerA, kTtftA, kTpsA, kTokensA, kFinishA, kAnswerB, kTtftB, kTpsB, kTokensB, kFinishB };

  // `prompts`: the history filter whose first N rows are the experiment's inputs.
  ExperimentWindow(StorageService* storage, ChatBackend* backend, store::HistoryQuery prompts,
                   QWidget* parent = nullptr);

  QStandardItemModel* results() const { return results_; }
  ExperimentRunner* runner() const { return runner_; }
  qint64 shownExperiment() const { return shown_; }
  bool versionsLoaded() const;

 public slots:
  void run();
  void showExperiment(qint64 experiment_id);
  void reloadList();

 signals:
  void experimentShown(qint64 experiment_id);

 private:
  struct Cell {
    std::string text;
    std::optional<store::GenerationRecord> generation;
  };
  struct Row {
    std::string prompt;
    std::optional<Cell> a, b;
  };
  struct Loaded {
    store::Experiment experiment;
    std::string version_a, version_b;  // "NAME@N"
    std::vector<Row> rows;
  };
  void fill(const Loaded& loaded);
  void loadVersions();

  StorageService* storage_;
  ChatBackend* backend_;
  store::HistoryQuery prompts_;
  ExperimentRunner* runner_;
  QStandardItemModel* results_;
  QLineEdit* name_ = nullptr;
  QComboBox* version_a_ = nullptr;
  QComboBox* version_b_ = nullptr;
  QSpinBox* count_ = nullptr;
  QPushButton* run_ = nullptr;
  QLabel* status_ = nullptr;
  QLabel* summary_ = nullptr;
  QTableView* table_ = nullptr;
  QListView* past_ = nullptr;
  QStandardItemModel* past_model_ = nullptr;
  qint64 shown_ = 0;
};

}  // namespace hearth::app
