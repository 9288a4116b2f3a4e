// How to re-run a past prompt: with the prompt version its answer used or
// another ("NAME@3", a label), that answer's sampling or a new temperature
// and seed; always on the model loaded now. Emits runRequested and closes.
#pragma once

#include <QDialog>

#include "conversation/turn.h"
#include "store/review_records.h"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QSpinBox;

namespace hearth::app {

class StorageService;

class RerunDialog : public QDialog {
  Q_OBJECT

 public:
  RerunDialog(StorageService* storage, const store::HistoryEntry& entry, QWidget* parent = nullptr);

  // What run() would ask for: the prompt ("" as before) and the overrides.
  QString prompt() const;
  conversation::SamplingOverrides overrides() const;

 public slots:
  void run();

 signals:
  void runRequested(qint64 user_message_id, const QString& prompt,
                    const hearth::conversation::SamplingOverrides& overrides);

 private:
  qint64 message_id_ = 0;
  QComboBox* prompt_ = nullptr;
  QCheckBox* set_temperature_ = nullptr;
  QDoubleSpinBox* temperature_ = nullptr;
  QCheckBox* new_seed_ = nullptr;
  QSpinBox* seed_ = nullptr;
};

}  // namespace hearth::app
